/** GET /v1/forwarding needs a key with the `read` scope, like every read (docs/security.md). */
import {expect} from 'chai'
import {parseKeyFile} from '../../src/core/auth/keys.js'
import {useService} from '../support/harness.js'

const READ = 'forwarding-read-key-0123456789'
const WRITE = 'forwarding-write-key-012345678'

describe('GET /v1/forwarding', function () {
  const service = useService({apiKeys: parseKeyFile(`${READ} read\n${WRITE} write\n`, 'keys')}, 'suite')

  const get = (key?: string) =>
    fetch(`${service.url}/v1/forwarding`, {headers: key ? {authorization: `Bearer ${key}`} : {}})

  it('answers a read key with the destinations (none without --forward)', async () => {
    const response = await get(READ)
    expect(response.status).to.equal(200)
    expect(await response.json()).to.deep.equal({destinations: []})
  })

  it('refuses a request without a key (401) and a key without read (403)', async () => {
    expect((await get()).status).to.equal(401)
    const refused = await get(WRITE)
    expect(refused.status).to.equal(403)
    expect((await refused.json()).error.code).to.equal('forbidden')
  })
})
