export {
  ChainVerifier,
  verifyChain,
  type AllChainsResult,
  type ChainFailureReason,
  type ChainInvalid,
  type ChainResult,
  type ChainValid,
} from './verify.js'
