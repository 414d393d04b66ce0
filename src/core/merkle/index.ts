/** The RFC 9162 section 2.1 Merkle tree (docs/verification.md 5): hashing, the tree, proofs. */
export {HASH_SIZE, LEAF_PREFIX, NODE_PREFIX, emptyRoot, hashChildren, hashLeaf} from './hasher.js'
export {MerkleError, type MerkleErrorCode} from './errors.js'
export {MerkleTree} from './tree.js'
export {computeRoot} from './root.js'
export {InclusionVerifier, rootFromInclusionProof, verifyConsistency, verifyInclusion} from './proof.js'
export {leafDataFromHex, leafDataFromHexChunks} from './leaf-data.js'
export {NodeTree} from './node-tree.js'
export {ExpandedTile, TiledTree, appendedTiles, edgeTiles, tileKey, type TileRow} from './tiled.js'
