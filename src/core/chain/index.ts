export {
  ChainVerifier,
  recomputeHash,
  verifyChain,
  type AllChainsResult,
  type ChainFailureReason,
  type ChainInvalid,
  type ChainLink,
  type ChainResult,
  type ChainValid,
} from './verify.js'
