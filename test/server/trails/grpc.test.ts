/** OTLP/gRPC names its trail with the `trail` metadata entry (docs/otlp.md, OTLP/gRPC). */
import {Metadata, credentials, makeGenericClientConstructor, status} from '@grpc/grpc-js'
import {expect} from 'chai'
import {parseKeyFile} from '../../../src/core/auth/keys.js'
import {startService, type RunningService} from '../../../src/server/start.js'
import {encodeProtobufTraceRequest} from '../../../src/services/otlp/protobuf.js'
import {removeDir, tempDir} from '../../support/harness.js'

const ADMIN = 'grpc-admin-key-0123456789abcdef'
const BOUND = 'grpc-bound-key-0123456789abcdef'

const span = (agent: string) =>
  Buffer.from(
    encodeProtobufTraceRequest({
      resourceSpans: [
        {
          resource: {attributes: [{key: 'service.name', value: {stringValue: agent}}]},
          scopeSpans: [
            {
              spans: [
                {
                  traceId: Buffer.alloc(16, 7).toString('base64'),
                  spanId: Buffer.alloc(8, Math.floor(Math.random() * 200) + 1).toString('base64'),
                  name: 'step',
                  startTimeUnixNano: '1764979200000000000',
                  endTimeUnixNano: '1764979201000000000',
                },
              ],
            },
          ],
        },
      ],
    }),
  )

describe('OTLP/gRPC into a trail', function () {
  this.timeout(30_000)
  let dir: string
  let service: RunningService
  before(async () => {
    dir = await tempDir()
    const apiKeys = parseKeyFile(`${ADMIN} read,write,admin\n${BOUND} write trail=payments\n`)
    service = await startService({dataDir: dir, host: '127.0.0.1', port: 0, otlpGrpcPort: 0, apiKeys})
    await service.trails.create('payments')
  })
  after(async () => {
    await service.close()
    await removeDir(dir)
  })

  function exportSpans(body: Buffer, key: string, trail?: string): Promise<number> {
    const bytes = (buffer: Buffer) => buffer
    const Client = makeGenericClientConstructor(
      {
        Export: {
          path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
          requestStream: false,
          responseStream: false,
          requestSerialize: bytes,
          requestDeserialize: bytes,
          responseSerialize: bytes,
          responseDeserialize: bytes,
        },
      },
      'Traces',
    )
    const client = new Client(`127.0.0.1:${service.otlpGrpcPort}`, credentials.createInsecure()) as any
    const metadata = new Metadata()
    metadata.set('authorization', `Bearer ${key}`)
    if (trail !== undefined) metadata.set('trail', trail)
    return new Promise((resolve) =>
      client.Export(body, metadata, (error: {code: number} | null) => {
        client.close()
        resolve(error?.code ?? status.OK)
      }),
    )
  }

  it("records into the trail the metadata names, else the key's, else default", async () => {
    expect(await exportSpans(span('named'), ADMIN, 'payments')).to.equal(status.OK)
    expect(await exportSpans(span('bound'), BOUND)).to.equal(status.OK)
    expect(await exportSpans(span('plain'), ADMIN)).to.equal(status.OK)
    const agents = async (trail: string) =>
      (await (await service.trails.open(trail)).query.listEvents({limit: '100'})).events.map((e) => e.agent_id)
    expect(await agents('payments')).to.deep.equal(['named', 'bound'])
    expect(await agents('default')).to.deep.equal(['plain'])
  })

  it('answers NOT_FOUND for an unknown trail and for one the key is not bound to', async () => {
    expect(await exportSpans(span('x'), ADMIN, 'nowhere')).to.equal(status.NOT_FOUND)
    expect(await exportSpans(span('x'), BOUND, 'default')).to.equal(status.NOT_FOUND)
    expect(await exportSpans(span('x'), ADMIN, 'Bad Name')).to.equal(status.INVALID_ARGUMENT)
  })
})
