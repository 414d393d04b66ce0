/**
 * A stand-in of `Trails` (src/services/trails.ts) made of one `openAudit` per trail, each on a
 * directory of its own: what the server needs of a service of several trails, for its tests.
 */
import path from 'node:path'
import {AuditError} from '../../src/core/errors.js'
import {checkTrailName, DEFAULT_TRAIL} from '../../src/core/trail/name.js'
import {openAudit, type AuditOptions, type AuditServices} from '../../src/services/audit.js'
import type {CreateTrailOptions, TrailInfo, Trails} from '../../src/services/trails.js'

export async function openTrailsDouble(options: AuditOptions): Promise<Trails> {
  const opened = new Map<string, AuditServices>([[DEFAULT_TRAIL, await openAudit(options)]])
  const sealed = new Set<string>()
  const listeners: Array<(name: string, services: AuditServices) => void> = []
  const info = async (name: string): Promise<TrailInfo> => {
    const services = opened.get(name)!
    const identity = await services.checkpoints.identity()
    const size = await services.tree.size()
    return {
      name,
      origin: identity.origin,
      verifier_key: identity.verifierKey,
      tree_size: size,
      sealed: sealed.has(name),
    }
  }
  const names = () => [DEFAULT_TRAIL, ...[...opened.keys()].filter((n) => n !== DEFAULT_TRAIL).sort()]
  const trails: Trails = {
    default: opened.get(DEFAULT_TRAIL)!,
    names: async () => names(),
    async open(name) {
      const services = opened.get(name)
      if (!services) throw new AuditError('trail_not_found', `no trail named ${name}`)
      return services
    },
    list: async (only) =>
      Promise.all(
        names()
          .filter((n) => only === undefined || only.includes(n))
          .map(info),
      ),
    async create(name, created: CreateTrailOptions = {}) {
      checkTrailName(name)
      if (opened.has(name)) throw new AuditError('conflict', `the trail ${name} exists`)
      const dataDir = path.join(options.dataDir, 'trails', name)
      const services = await openAudit({...options, databaseUrl: undefined, dataDir, origin: created.origin})
      opened.set(name, services)
      for (const listener of listeners) listener(name, services)
      return info(name)
    },
    async seal(name) {
      await trails.open(name)
      sealed.add(name)
      return info(name)
    },
    onOpen: (listener) => void listeners.push(listener),
    async close() {
      for (const services of opened.values()) await services.close()
    },
  }
  return trails
}
