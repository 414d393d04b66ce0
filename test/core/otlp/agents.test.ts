import {expect} from 'chai'
import fc from 'fast-check'
import {AgentDirectory, type SpanPlace} from '../../../src/core/otlp/agents.js'

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const OTHER_TRACE = '0af7651916cd43dd8448eb211c80319c'
const RESOURCE = {'service.name': 'support-service'}

function span(
  spanId: string,
  parent: string,
  attributes: Record<string, string> = {},
  traceId = TRACE,
  resource: Record<string, string> = RESOURCE,
): SpanPlace {
  return {traceId, spanId, parentSpanId: parent, attributes, resource}
}

const id = (n: number) => n.toString(16).padStart(16, '0')
const agentOf = (directory: AgentDirectory, spans: SpanPlace[]) =>
  directory.resolveSpans(spans).map((r) => `${r.agent}/${r.source}`)

describe('core/otlp/agents (which agent a span belongs to)', () => {
  it('takes the span own gen_ai.agent.name, else gen_ai.agent.id', () => {
    const directory = new AgentDirectory()
    expect(
      agentOf(directory, [
        span(id(1), '', {'gen_ai.agent.name': 'support-bot', 'gen_ai.agent.id': 'asst_1'}),
        span(id(2), '', {'gen_ai.agent.id': 'asst_9'}),
      ]),
    ).to.deep.equal(['support-bot/span', 'asst_9/span'])
  })

  it('reads a bare gen_ai.agent.id as the name it was seen with', () => {
    const directory = new AgentDirectory()
    directory.resolveSpans([span(id(1), '', {'gen_ai.agent.name': 'support-bot', 'gen_ai.agent.id': 'asst_1'})])
    expect(agentOf(directory, [span(id(2), '', {'gen_ai.agent.id': 'asst_1'}, OTHER_TRACE)])).to.deep.equal([
      'support-bot/span',
    ])
  })

  it('gives children and grandchildren their nearest ancestor agent, parents later in the same request too', () => {
    const directory = new AgentDirectory()
    // The SDK exports in end order: grandchild, children, then the root.
    const spans = [
      span(id(4), id(3)),
      span(id(3), id(1)),
      span(id(6), id(5)),
      span(id(5), id(1), {'gen_ai.agent.name': 'billing-bot'}),
      span(id(2), id(1)),
      span(id(1), '', {'gen_ai.agent.name': 'support-bot'}),
    ]
    expect(agentOf(directory, spans)).to.deep.equal([
      'support-bot/ancestor',
      'support-bot/ancestor',
      'billing-bot/ancestor',
      'billing-bot/span',
      'support-bot/ancestor',
      'support-bot/span',
    ])
  })

  it('resolves a later request through the spans recorded before', () => {
    const directory = new AgentDirectory()
    directory.resolveSpans([span(id(2), id(1)), span(id(1), '', {'gen_ai.agent.name': 'support-bot'})])
    expect(agentOf(directory, [span(id(3), id(2))])).to.deep.equal(['support-bot/ancestor'])
    // The same span ids in another trace are another run.
    expect(agentOf(directory, [span(id(3), id(2), {}, OTHER_TRACE)])).to.deep.equal(['support-service/service'])
  })

  it('does not wait for a parent that has not arrived: resource agent, then service.name, then unknown_service', () => {
    const directory = new AgentDirectory()
    expect(agentOf(directory, [span(id(2), id(1))])).to.deep.equal(['support-service/service'])
    expect(
      agentOf(directory, [span(id(3), id(1), {}, TRACE, {'service.name': 's', 'gen_ai.agent.name': 'r-bot'})]),
    ).to.deep.equal(['r-bot/resource'])
    expect(agentOf(directory, [span(id(4), id(1), {}, TRACE, {})])).to.deep.equal(['unknown_service/default'])
    // The parent arriving afterwards does not change what was recorded, but serves its later children.
    directory.resolveSpans([span(id(1), '', {'gen_ai.agent.name': 'support-bot'})])
    expect(agentOf(directory, [span(id(5), id(1))])).to.deep.equal(['support-bot/ancestor'])
  })

  it('resolves a log record through the span it was emitted in', () => {
    const directory = new AgentDirectory()
    directory.resolveSpans([span(id(2), id(1)), span(id(1), '', {'gen_ai.agent.name': 'support-bot'})])
    const record = {traceId: TRACE, spanId: id(2), attributes: {}, resource: RESOURCE}
    expect(directory.resolveRecord(record)).to.deep.equal({agent: 'support-bot', source: 'ancestor'})
    expect(directory.resolveRecord({...record, spanId: id(9)})).to.deep.equal({
      agent: 'support-service',
      source: 'service',
    })
    expect(directory.resolveRecord({...record, attributes: {'gen_ai.agent.name': 'x'}})).to.deep.equal({
      agent: 'x',
      source: 'span',
    })
  })

  it('stays within its capacity, forgetting the oldest spans first', () => {
    const directory = new AgentDirectory(3)
    directory.resolveSpans([span(id(1), '', {'gen_ai.agent.name': 'old-bot'})])
    directory.resolveSpans([
      span(id(2), '', {'gen_ai.agent.name': 'b'}),
      span(id(3), '', {'gen_ai.agent.name': 'c'}),
      span(id(4), '', {'gen_ai.agent.name': 'd'}),
    ])
    expect(directory.knownSpans).to.equal(3)
    expect(agentOf(directory, [span(id(5), id(1))])).to.deep.equal(['support-service/service'])
    expect(agentOf(directory, [span(id(6), id(4))])).to.deep.equal(['d/ancestor'])
  })

  it('ends on a cycle of parent ids', () => {
    const directory = new AgentDirectory()
    expect(agentOf(directory, [span(id(1), id(2)), span(id(2), id(1))])).to.deep.equal([
      'support-service/service',
      'support-service/service',
    ])
  })

  it('agrees with a naive reference on random trees sent in random request splits', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(), fc.boolean()), {minLength: 1, maxLength: 30}),
        fc.array(fc.nat(), {maxLength: 5}),
        (nodes, cuts) => {
          // Node i > 0 has parent (n mod i); it names agent `a<i>` when its flag is set.
          const parents = nodes.map(([n], i) => (i === 0 ? -1 : n % i))
          const named = nodes.map(([, flag]) => flag)
          const spans = nodes.map((_, i) =>
            span(id(i + 1), parents[i]! < 0 ? '' : id(parents[i]! + 1), named[i] ? {'gen_ai.agent.name': `a${i}`} : {}),
          )
          // Reference: the nearest named ancestor, when it arrived no later than the span's request.
          const order = [...spans.keys()].reverse() // children first, as the SDK exports
          const bounds = [...new Set(cuts.map((c) => c % (order.length + 1)))].sort((a, b) => a - b)
          const requests: number[][] = []
          let start = 0
          for (const bound of [...bounds, order.length]) {
            requests.push(order.slice(start, bound))
            start = Math.max(start, bound)
          }
          const requestOf = new Map<number, number>()
          requests.forEach((members, r) => members.forEach((i) => requestOf.set(i, r)))
          const directory = new AgentDirectory()
          for (const members of requests) {
            if (members.length === 0) continue
            const got = directory.resolveSpans(members.map((i) => spans[i]!))
            members.forEach((i, k) => {
              let expected = 'support-service'
              for (let node = i; node >= 0; node = parents[node]!) {
                if (requestOf.get(node)! > requestOf.get(i)!) break
                if (named[node]) {
                  expected = `a${node}`
                  break
                }
              }
              expect(got[k]!.agent).to.equal(expected)
            })
          }
        },
      ),
    )
  })
})
