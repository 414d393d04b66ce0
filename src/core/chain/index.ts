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
  type IndexGap,
} from './verify.js'
