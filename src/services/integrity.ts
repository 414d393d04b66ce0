/**
 * Integrity: chain verification, the Merkle root and proofs (docs/api.md, Integrity).
 *
 * GET /v1/verify always recomputes every hash from stored content. The chain status shown by
 * /v1/agents and /v1/stats comes from the same verifier, fed incrementally: it has seen every
 * stored event up to `fedUpTo` and only reads the events appended since, so it is a cache that is
 * valid until the store changes, never a substitute for reading stored content. Erased members are
 * checked against the erasure events they name (erasure-references.ts).
 */
import {inScope, type AgentScope} from '../core/auth/agent-scope.js'
import {ChainVerifier, type AllChainsResult, type ChainResult, type IndexGap} from '../core/chain/index.js'
import {AuditError} from '../core/errors.js'
import {lookupId} from '../core/request-text.js'
import {sha256Hex} from '../core/crypto.js'
import {MerkleError, MerkleTree, hashLeaf, verifyConsistency} from '../core/merkle/index.js'
import type {EventFilter} from '../core/types.js'
import type {EventStore} from '../store/store.js'
import type {TreeReads, TreeView} from './tree-view.js'
import {toHex} from '../core/hex.js'
import {RESERVED_AGENT_PREFIX} from '../core/event/index.js'
import {SignatureLedger, unsignedReason, type KeyTimeline} from '../core/signature/index.js'
import {withErasureChecks} from './erasure-references.js'

export interface MerkleRootView {
  merkle_root: string
  tree_size: number
  algorithm: 'rfc9162-sha256'
  computed_at: string
}

/** A tree some signed statement covers: its size and root (hex). */
interface SignedTree {
  tree_size: number
  root: string
}

/** Where the agents' keys come from (AgentKeysService): every key event stored when called. */
interface KeySource {
  current(): Promise<KeyTimeline>
}

export class IntegrityService {
  private readonly store: EventStore
  private readonly tree: TreeView
  private readonly keys: KeySource
  private statusVerifier = new ChainVerifier()
  /** Which events have no valid signature (the policy rule signed_events), fed with the status verifier. */
  private signatures = new SignatureLedger()
  /** The tree over the hashes recomputed from stored content, fed with the status verifier. */
  private contentTree = new MerkleTree()
  private fedUpTo = 0
  private refreshing: Promise<{results: ChainResult[]; size: number}> | undefined

  constructor(options: {store: EventStore; tree: TreeView; keys: KeySource}) {
    this.store = options.store
    this.tree = options.tree
    this.keys = options.keys
  }

  /**
   * Verifies one agent's chain from stored content, to the head the service recorded for it;
   * 404 for an agent with neither events nor a recorded head. The head and the number of events
   * are read at one instant, and only the events below that number are read: events appended
   * meanwhile are neither missing nor extra.
   */
  async verifyAgent(agentId: string, scope?: AgentScope): Promise<ChainResult> {
    // An agent outside a bound key's scope is unknown to it (docs/security.md).
    const verifier = inScope(scope, agentId)
      ? await this.#verifyChains((id) => id === agentId, {agent_id: agentId})
      : undefined
    const result = verifier?.result(agentId)
    if (!result) throw new AuditError('not_found', `no events for agent ${agentId}`)
    return result
  }

  /** The chains of the agents `keep` names, their events read with `filter`, to the recorded heads. */
  async #verifyChains(keep: (agentId: string) => boolean, filter: EventFilter): Promise<ChainVerifier> {
    const {heads, size} = await this.store.chainHeads()
    // Read after the heads: it holds every key event below `size` (docs/signatures.md).
    const keys = await this.keys.current()
    const verifier = new ChainVerifier(
      heads.filter((head) => keep(head.agent_id)),
      keys,
    )
    const scan = this.store.scanHashedEvents({filter, toIndex: size, signatureKeys: keys.jwks()})
    for await (const {links, hashes, signatures} of withErasureChecks(this.store, scan))
      verifier.addHashed(links, hashes, signatures)
    return verifier
  }

  /**
   * Verifies every agent's chain from stored content, to the recorded heads (read with the event
   * count at one instant, as in verifyAgent), and that the log's indexes run 0, 1, 2... without a
   * gap: an event removed from the middle of the log, renumbered, or put under a negative index
   * shows there even when no chain shows it.
   */
  async verifyAll(scope?: AgentScope): Promise<AllChainsResult> {
    // A bound key's agents: their chains only; the run of the log's indexes is the trail's, not theirs.
    if (scope !== undefined)
      return (await this.#verifyChains((id) => scope.matches(id), {agents: scope.patterns})).summary()
    const {heads, size} = await this.store.chainHeads()
    const keys = await this.keys.current()
    const verifier = new ChainVerifier(heads, keys)
    let nextIndex = 0
    let gap: IndexGap | undefined
    const scan = this.store.scanHashedEvents({toIndex: size, signatureKeys: keys.jwks()})
    for await (const {links, hashes, signatures} of withErasureChecks(this.store, scan)) {
      verifier.addHashed(links, hashes, signatures)
      for (const link of links) {
        if (gap === undefined && link.index !== nextIndex)
          gap = {expected_index: nextIndex, actual_index: link.index, event_id: link.id}
        nextIndex = link.index + 1
      }
    }
    const summary = verifier.summary()
    return gap === undefined ? summary : {...summary, valid: false, index_gap: gap}
  }

  /** Each agent's chain verification, cached until the store changes (for agents, stats, policies). */
  async chainResults(): Promise<Map<string, ChainResult>> {
    return new Map((await this.catchUp()).map((r) => [r.agent_id, r]))
  }

  /**
   * Why an agent's event (by sequence) carries no valid signature by a key of the agent, or
   * undefined when it has one (the policy rule signed_events), as of the events stored when called.
   */
  async signatureReasons(): Promise<(agentId: string, sequence: number) => string | undefined> {
    await this.catchUp()
    const ledger = this.signatures
    return (agentId, sequence) => ledger.reasonOf(agentId, sequence)
  }

  /** Whether each agent's chain verifies, for /v1/agents and /v1/stats. */
  async chainStatus(): Promise<Map<string, boolean>> {
    return new Map([...(await this.chainResults())].map(([agent, result]) => [agent, result.valid]))
  }

  /**
   * Brings the status verifier and the content tree up to the events stored when called, and
   * gives every agent's result as of a catch-up that covered them. A catch-up already running is
   * joined, but it may have started before the latest events (the one after start-up takes ~20 s
   * at 1M): then another follows it, so no caller gets an answer older than its own request.
   */
  private async catchUp(): Promise<ChainResult[]> {
    const wanted = await this.store.count()
    for (;;) {
      const {results, size} = await (this.refreshing ??= this.feed())
      if (size >= wanted) return results
    }
  }

  /**
   * Feeds the events stored since the last feeding; the results are taken as the feeding ends,
   * before a later one can set newer heads (which would make chains not fed yet look short).
   */
  private async feed(): Promise<{results: ChainResult[]; size: number}> {
    try {
      // The recorded heads with the count, at one instant: the chains fed up to `size` end at them.
      const {heads, size} = await this.store.chainHeads()
      const keys = await this.keys.current()
      if (size < this.fedUpTo) {
        this.statusVerifier = new ChainVerifier()
        this.signatures = new SignatureLedger()
        this.contentTree = new MerkleTree()
        this.fedUpTo = 0
      }
      this.statusVerifier.useHeads(heads)
      // Key events only add to the timeline: the newest one is right for every event fed from here.
      this.statusVerifier.useKeys(keys)
      // From the start, no lower bound: a row under a negative index counts too (see the store's scans).
      const scan = this.store.scanHashedEvents({
        fromIndex: this.fedUpTo === 0 ? undefined : this.fedUpTo,
        toIndex: size,
        signatureKeys: keys.jwks(),
      })
      for await (const {links, hashes, signatures} of withErasureChecks(this.store, scan)) {
        this.statusVerifier.addHashed(links, hashes, signatures)
        links.forEach((link, i) => {
          if (link.agent_id.startsWith(RESERVED_AGENT_PREFIX)) return
          this.signatures.add(
            link.agent_id,
            link.sequence,
            unsignedReason(link.agent_id, link.index, signatures[i]!, keys),
          )
        })
        // The tree of recomputed hashes: an event whose content cannot be hashed at all (only
        // after tampering) gets the hash of its description, which matches nothing.
        for (const hash of hashes) this.contentTree.appendHex(/^[0-9a-f]{64}$/.test(hash) ? hash : sha256Hex(hash))
        // Batch by batch: should the scan fail part way, the next one starts after what was fed.
        if (links.length > 0) this.fedUpTo = links[links.length - 1]!.index + 1
      }
      this.fedUpTo = size
      return {results: this.statusVerifier.results(), size}
    } finally {
      this.refreshing = undefined
    }
  }

  async merkleRoot(): Promise<MerkleRootView> {
    const [root, size] = await this.tree.read((tree, size) => [toHex(tree.rootAt(size)), size] as const)
    return {
      merkle_root: root,
      tree_size: size,
      algorithm: 'rfc9162-sha256',
      computed_at: new Date().toISOString(),
    }
  }

  /** GET /v1/merkle/proof/:id: the inclusion proof of one event in the tree of `treeSize` leaves. */
  async inclusionProof(eventId: string, treeSize?: number) {
    const stored = lookupId(eventId)
    const event = stored === undefined ? undefined : await this.store.getEvent(stored)
    if (!event) throw new AuditError('not_found', `no event with id ${eventId}`)
    const current = await this.tree.size()
    const size = treeSize ?? current
    if (!Number.isSafeInteger(size) || size <= event.index || size > current) {
      throw new AuditError('validation_error', `tree_size must be an integer from ${event.index + 1} to ${current}`, {
        details: [{field: 'tree_size', message: `must be an integer from ${event.index + 1} to ${current}`}],
      })
    }
    const [path, root] = await this.tree.read(
      (tree) => [tree.inclusionProof(event.index, size).map(toHex), toHex(tree.rootAt(size))] as const,
      size,
    )
    return {
      event_id: event.id,
      leaf_index: event.index,
      tree_size: size,
      leaf_hash: toHex(hashLeaf(Buffer.from(event.hash, 'hex'))),
      audit_path: path,
      merkle_root: root,
    }
  }

  /** GET /v1/merkle/consistency: RFC 9162 2.1.4 proof that the tree of `first` leaves is a prefix of `second`. */
  async consistency(first: number, secondAsked?: number) {
    const current = await this.tree.size()
    const second = secondAsked ?? current
    const details = []
    const secondOk = Number.isSafeInteger(second) && second >= 0 && second <= current
    if (!secondOk) details.push({field: 'second', message: `must be an integer from 0 to the tree size (${current})`})
    if (!Number.isSafeInteger(first) || first < 0 || first > (secondOk ? second : current)) {
      details.push({
        field: 'first',
        message: `must be an integer from 0 to second (${secondOk ? second : `at most ${current}`})`,
      })
    }
    if (details.length > 0) {
      throw new AuditError(
        'validation_error',
        `first and second must be integers with 0 <= first <= second <= ${current}`,
        {details},
      )
    }
    return this.tree.read(
      (tree) => ({
        first,
        second,
        first_root: toHex(tree.rootAt(first)),
        second_root: toHex(tree.rootAt(second)),
        proof: tree.consistencyProof(first, second).map(toHex),
      }),
      second,
    )
  }

  /**
   * Whether the tree of `size` leaves with root `rootHex` is a prefix of the current tree, both as
   * the tree whose leaves are the hashes recomputed from every stored event's fields, so that
   * tampering with a covered event makes it false, and as the service's tree of the stored `hash`
   * column (GET /v1/merkle/root), so that editing only a covered `hash` does too. The recomputed
   * tree is kept up to date incrementally with the chain status, so a check reads only the events
   * stored since the last one.
   */
  async isConsistentWithStorage(size: number, rootHex: string): Promise<boolean> {
    await this.catchUp()
    const root = Buffer.from(rootHex, 'hex')
    const contentTree = this.contentTree
    return (
      extendsTree(contentTree, contentTree.size, size, root) &&
      (await this.tree.read((tree, upTo) => extendsTree(tree, upTo, size, root)))
    )
  }

  /**
   * Why the first `size` events as stored now do not extend each signed tree (`tree_size` leaves,
   * `root`), or undefined when they extend all of them. Checked as isConsistentWithStorage does,
   * and also that the tree of `size` is the one its events' content gives: a tree to be signed
   * must be one that a later check over stored content still calls consistent.
   */
  async extensionFailures(signed: ReadonlyArray<SignedTree>, size: number): Promise<Array<string | undefined>> {
    await this.catchUp()
    const contentTree = this.contentTree
    if (size > (await this.tree.size()) || size > contentTree.size)
      throw new RangeError(`no tree of ${size} events stored`)
    // One read of the stored tree for every signed tree: the tiles it needs are fetched once.
    const stored = await this.tree.read(
      (tree) => ({
        root: toHex(tree.rootAt(size)),
        extending: signed.map(
          ({tree_size, root}) => tree_size <= size && extendsTree(tree, size, tree_size, Buffer.from(root, 'hex')),
        ),
      }),
      size,
    )
    const contentMatches = toHex(contentTree.rootAt(size)) === stored.root
    return signed.map(({tree_size, root: rootHex}, i) => {
      if (tree_size > size) return `the tree of ${size} events is smaller than the signed tree of ${tree_size}`
      const root = Buffer.from(rootHex, 'hex')
      if (!extendsTree(contentTree, size, tree_size, root)) {
        return `the stored events, hashed from their content, do not extend the signed tree of ${tree_size} events`
      }
      if (!stored.extending[i]) {
        return `the stored event hashes are not an extension of the signed tree of ${tree_size} events`
      }
      if (contentMatches) return undefined
      return `a stored hash among the first ${size} events does not match its event's content`
    })
  }
}

/**
 * Whether the first `upTo` leaves of `tree` (which holds at least that many) extend the tree of
 * `size` leaves with `root`, checked by their RFC 9162 2.1.4 consistency proof as an outside
 * verifier would.
 */
function extendsTree(tree: TreeReads, upTo: number, size: number, root: Buffer): boolean {
  if (size > upTo) return false
  try {
    verifyConsistency(size, upTo, root, tree.rootAt(upTo), tree.consistencyProof(size, upTo))
    return true
  } catch (error) {
    if (error instanceof MerkleError) return false
    throw error
  }
}
