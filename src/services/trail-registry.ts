/**
 * The trails of a service (docs/trails.md): `default` opened exactly as a log was before trails
 * existed (same data directory or database, same origin, log key and root), every other trail
 * opened on first use and kept, each with its own store, origin and log key and the service's TSA.
 */
import {AuditError} from '../core/errors.js'
import {checkTrailName, DEFAULT_TRAIL, isTrailName} from '../core/trail/name.js'
import {openAudit, type AuditOptions, type AuditServices} from './audit.js'
import {checkOrigin} from './checkpoints.js'
import {databaseCatalog, directoryCatalog, type TrailCatalog} from './trail-catalogs.js'
import type {CreateTrailOptions, TrailInfo, Trails} from './trails.js'

type Listener = (name: string, services: AuditServices) => void

function notFound(name: string): AuditError {
  return new AuditError(
    'trail_not_found',
    `no trail named ${name}: audit-trail trails list shows the trails, trails create makes one`,
  )
}

class TrailRegistry implements Trails {
  readonly #opened = new Map<string, Promise<AuditServices>>()
  readonly #listeners: Listener[] = []
  #closed = false

  constructor(
    private readonly options: AuditOptions,
    readonly defaultServices: AuditServices,
    private readonly catalog: TrailCatalog,
  ) {}

  get default(): AuditServices {
    return this.defaultServices
  }

  async names(): Promise<string[]> {
    return [DEFAULT_TRAIL, ...(await this.catalog.list()).map((trail) => trail.name)]
  }

  open(name: string): Promise<AuditServices> {
    if (name === DEFAULT_TRAIL) return Promise.resolve(this.defaultServices)
    if (this.#closed) return Promise.reject(new AuditError('storage_unavailable', 'the trails are closed'))
    let opening = this.#opened.get(name)
    if (opening === undefined) {
      opening = this.#openTrail(name)
      this.#opened.set(name, opening)
      // A trail that failed to open is tried again by the next request, not remembered as failed.
      opening.catch(() => this.#opened.delete(name))
    }
    return opening
  }

  async list(names?: readonly string[]): Promise<TrailInfo[]> {
    const all = await this.names()
    return Promise.all(
      all.filter((name) => names === undefined || names.includes(name)).map((name) => this.#info(name)),
    )
  }

  async create(name: string, options: CreateTrailOptions = {}): Promise<TrailInfo> {
    checkTrailName(name)
    if (name === DEFAULT_TRAIL) throw new AuditError('conflict', 'trail default exists: every service has it')
    if ((await this.catalog.get(name)) !== undefined) throw new AuditError('conflict', `trail ${name} exists`)
    const origin = checkOrigin(
      options.origin ?? `${(await this.defaultServices.checkpoints.identity()).origin}/${name}`,
    )
    await this.#assertOriginFree(origin)
    await this.catalog.create({name, origin, inDatabase: options.inDatabase})
    return this.#info(name)
  }

  async seal(name: string): Promise<TrailInfo> {
    const services = await this.open(name)
    await services.store.seal()
    // The final checkpoint: the tree as sealed, signed unless the latest checkpoint is of it already.
    await services.refresh()
    await services.checkpoints.signIfGrown()
    return this.#info(name)
  }

  onOpen(listener: Listener): void {
    this.#listeners.push(listener)
    for (const [name, opening] of this.#opened)
      void opening.then(
        (services) => listener(name, services),
        () => {},
      )
  }

  async close(): Promise<void> {
    this.#closed = true
    const opened = await Promise.allSettled(this.#opened.values())
    const closing = opened.flatMap((result) => (result.status === 'fulfilled' ? [result.value.close()] : []))
    const results = await Promise.allSettled([...closing, this.defaultServices.close(), this.catalog.close()])
    const failed = results.find((result) => result.status === 'rejected')
    if (failed) throw (failed as PromiseRejectedResult).reason
  }

  async #openTrail(name: string): Promise<AuditServices> {
    const record = isTrailName(name) ? await this.catalog.get(name) : undefined
    if (record === undefined) throw notFound(name)
    const services = await openAudit({
      ...this.options,
      ...(await this.catalog.storeOptions(name)),
      origin: record.origin,
      timestampAuthority: this.defaultServices.authority,
    })
    for (const listener of this.#listeners) listener(name, services)
    return services
  }

  async #info(name: string): Promise<TrailInfo> {
    const services = await this.open(name)
    const identity = await services.checkpoints.identity()
    return {
      name,
      origin: identity.origin,
      verifier_key: identity.verifierKey,
      tree_size: await services.tree.size(),
      sealed: await services.store.sealed(),
    }
  }

  /** Two trails under one origin would be one log to a witness (C2SP tlog-witness): refused. */
  async #assertOriginFree(origin: string): Promise<void> {
    const holders = [
      {name: DEFAULT_TRAIL, origin: (await this.defaultServices.checkpoints.identity()).origin},
      ...(await this.catalog.list()),
    ]
    const holder = holders.find((trail) => trail.origin === origin)
    if (holder !== undefined) throw new AuditError('conflict', `origin ${origin} is trail ${holder.name}'s`)
  }
}

/** The trails of the service of `options`: its data directory's, or its database's. */
export async function openTrails(options: AuditOptions): Promise<Trails> {
  const defaultServices = await openAudit(options)
  try {
    const catalog =
      options.databaseUrl === undefined ? await directoryCatalog(options) : await databaseCatalog(options.databaseUrl)
    return new TrailRegistry(options, defaultServices, catalog)
  } catch (error) {
    await defaultServices.close()
    throw error
  }
}
