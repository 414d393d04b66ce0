import {expect} from 'chai'
import {createTsaMaterial} from '../../src/core/timestamp/index.js'
import {openPostgresStore, type PostgresStore} from '../../src/store/index.js'
import {postgresPerTest} from '../support/stores.js'

/** The log's identity in PostgreSQL (store/postgres/identity.ts): adopted whole, or not at all. */
describe("the PostgreSQL store: the log's identity", function () {
  this.timeout(60_000)
  let store: PostgresStore | undefined
  const fresh = postgresPerTest(async () => {
    await store?.close()
    store = undefined
  })
  const material = async (name: string) => {
    const {caKeyPem: _unused, ...kept} = await createTsaMaterial({commonName: name})
    return kept
  }

  it('takes on an identity where it has none, and again the same one', async () => {
    store = await openPostgresStore({databaseUrl: fresh.url})
    const identity = {tsa: await material('A'), tsaAnchors: ['pem-1\n', 'pem-2\n'], logKeyPem: 'key-a\n'}
    expect(await store.adoptIdentity(identity)).to.deep.equal([])
    expect(await store.adoptIdentity(identity)).to.deep.equal([])
    expect(await store.readTsaMaterial()).to.deep.equal(identity.tsa)
    expect(await store.readTsaAnchors()).to.deep.equal(['pem-1\n', 'pem-2\n'])
    expect(await store.logKey(() => 'another')).to.equal('key-a\n')
    await store.addTsaAnchors(['pem-2\n', 'pem-3\n'])
    expect(await store.readTsaAnchors()).to.deep.equal(['pem-1\n', 'pem-2\n', 'pem-3\n'])
  })

  it("refuses another log's TSA or key and then writes nothing of the identity offered", async () => {
    store = await openPostgresStore({databaseUrl: fresh.url})
    const theirs = await store.saveTsaMaterial(await material('theirs'))
    const offered = {tsa: await material('ours'), tsaAnchors: ['pem-1\n'], logKeyPem: 'key-ours\n'}
    expect(await store.adoptIdentity(offered)).to.deep.equal(['embedded TSA'])
    expect(await store.readTsaMaterial()).to.deep.equal(theirs)
    expect(await store.readTsaAnchors()).to.deep.equal([])
    expect(await store.logKey(() => 'key-theirs\n')).to.equal('key-theirs\n')
    expect(await store.adoptIdentity({...offered, tsa: theirs})).to.deep.equal(['log key'])
    expect(await store.adoptIdentity(offered)).to.deep.equal(['embedded TSA', 'log key'])
  })
})
