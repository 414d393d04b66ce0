import {expect} from 'chai'
import {AuditError, type FieldError} from '../../../src/core/errors.js'
import {validateEvent} from '../../../src/core/event/validate.js'

const NOW = new Date('2026-11-21T22:45:00.789Z')
const GENERATED = '5f1c1b7e-9d0a-4c3b-8a2e-1f2d3c4b5a69'
const options = {now: NOW, generateId: () => GENERATED}
const MINIMAL = {agent_id: 'agent-1', action_type: 'TOOL_CALL', action_name: 'search'}

function validate(fields: Record<string, unknown>) {
  return validateEvent({...MINIMAL, ...fields}, options)
}

/** The field errors of a body that must be refused with 400 validation_error. */
function failures(body: unknown): FieldError[] {
  try {
    validateEvent(body, options)
  } catch (error) {
    expect(error).to.be.instanceOf(AuditError)
    const audit = error as AuditError
    expect(audit.code).to.equal('validation_error')
    expect(audit.status).to.equal(400)
    return audit.details ?? []
  }
  throw new Error(`accepted: ${JSON.stringify(body)}`)
}

/** Asserts that setting `fields` on a valid event fails on `field`, and only there. */
function expectRefused(fields: Record<string, unknown>, field: string, message?: RegExp): void {
  const details = failures({...MINIMAL, ...fields})
  expect(
    details.map((d) => d.field),
    `fields ${Object.keys(fields).join(', ')}`,
  ).to.deep.equal([field])
  if (message) expect(details[0].message).to.match(message)
}

const repeat = (text: string, n: number) => text.repeat(n)

describe('validateEvent (docs/api.md)', () => {
  describe('the body', () => {
    it('must be a JSON object', () => {
      for (const body of [null, [], 'event', 42, true, undefined]) {
        expect(failures(body)).to.deep.equal([{field: 'body', message: 'must be a JSON object'}])
      }
    })

    it('names every missing required field', () => {
      expect(failures({})).to.deep.equal([
        {field: 'agent_id', message: 'is required'},
        {field: 'action_type', message: 'is required'},
        {field: 'action_name', message: 'is required'},
      ])
    })

    it('reports every failing field, not only the first', () => {
      const details = failures({agent_id: '', action_type: 'x', labels: [], duration_ms: -1, extra: 1})
      expect(details.map((d) => d.field)).to.have.members([
        'agent_id',
        'action_type',
        'action_name',
        'labels',
        'duration_ms',
        'extra',
      ])
    })

    it('refuses unknown fields by name, including the fields the service adds', () => {
      expectRefused({colour: 'red'}, 'colour', /not a known field/)
      for (const field of ['sequence', 'prev_hash', 'recorded_at', 'hash', 'index']) {
        expectRefused({[field]: 1}, field, /set by the service/)
      }
      expect(failures(JSON.parse('{"agent_id":"a","action_type":"A","action_name":"n","__proto__":{}}'))).to.deep.equal(
        [{field: '__proto__', message: 'is not a known field'}],
      )
    })

    it('never reads fields from the prototype', () => {
      const body = Object.assign(Object.create({error: 'inherited', labels: 'x'}), MINIMAL)
      const {event, sent} = validateEvent(body, options)
      expect(event).to.not.have.property('error')
      expect(sent).to.deep.equal(['agent_id', 'action_type', 'action_name'])
    })
  })

  describe('normalisation', () => {
    it('fills defaults and reports only the sent fields', () => {
      const {event, sent} = validate({})
      expect(event).to.deep.equal({
        id: GENERATED,
        ...MINIMAL,
        action_status: 'success',
        timestamp: '2026-11-21T22:45:00.789Z',
        labels: {},
      })
      expect(sent).to.deep.equal(['agent_id', 'action_type', 'action_name'])
    })

    it('keeps every optional field that was sent, in table order', () => {
      const all = {
        id: '0190c1a2-7b3c-7d4e-8f90-0123456789ab',
        action_status: 'failure',
        timestamp: '2026-01-01T00:00:00Z',
        labels: {env: 'prod'},
        session_id: 's',
        trace_id: 't',
        span_id: 'sp',
        parent_id: 'p',
        input: {a: 1},
        output: [1],
        metadata: 'm',
        error: 'boom',
        duration_ms: 1.5,
      }
      const {event, sent} = validate(all)
      expect(Object.keys(event)).to.deep.equal([
        'id',
        'agent_id',
        'action_type',
        'action_name',
        'action_status',
        'timestamp',
        'labels',
        'session_id',
        'trace_id',
        'span_id',
        'parent_id',
        'input',
        'output',
        'metadata',
        'error',
        'duration_ms',
        'salts',
        'commitments',
      ])
      // The salts were drawn and the commitments computed by the service: neither was sent.
      expect(sent).to.deep.equal(Object.keys(event).slice(0, -2))
      expect(event.timestamp).to.equal('2026-01-01T00:00:00.000Z')
    })

    it('lower-cases a UUID of any version', () => {
      expect(validate({id: '0190C1A2-7B3C-7D4E-8F90-0123456789AB'}).event.id).to.equal(
        '0190c1a2-7b3c-7d4e-8f90-0123456789ab',
      )
      for (const id of [
        '00000000-0000-0000-0000-000000000000',
        'c232ab00-9414-11ec-b3c8-9f6bdeced846',
        'ffffffff-ffff-ffff-ffff-ffffffffffff',
      ]) {
        expect(validate({id}).event.id).to.equal(id)
      }
    })

    it('normalises the timestamp to UTC milliseconds', () => {
      expect(validate({timestamp: '2026-11-21T23:45:00.1234567+01:00'}).event.timestamp).to.equal(
        '2026-11-21T22:45:00.123Z',
      )
    })

    it('keeps null and odd keys of free-form JSON as data', () => {
      const body = JSON.parse(
        '{"agent_id":"a","action_type":"A","action_name":"n","input":null,"output":{"__proto__":{"x":1},' +
          '"constructor":2},"metadata":[]}',
      )
      const {event, sent} = validateEvent(body, options)
      expect(event.input).to.equal(null)
      expect(sent).to.include('input')
      expect(Object.keys(event.output as object)).to.deep.equal(['__proto__', 'constructor'])
      expect(({} as Record<string, unknown>).x).to.equal(undefined)
    })

    it('keeps __proto__ and constructor label keys as plain entries', () => {
      const body = JSON.parse(
        '{"agent_id":"a","action_type":"A","action_name":"n","labels":{"__proto__":"p","constructor":"c"}}',
      )
      const {labels} = validateEvent(body, options).event
      expect(Object.keys(labels)).to.deep.equal(['__proto__', 'constructor'])
      expect(labels.__proto__).to.equal('p')
      expect(Object.hasOwn(labels, '__proto__')).to.equal(true)
      // The same plain object JSON.parse would give: nothing inherited became a label.
      expect(Object.hasOwn(labels, 'toString')).to.equal(false)
      expect(JSON.stringify(labels)).to.equal('{"__proto__":"p","constructor":"c"}')
      expect(labels).to.deep.equal(JSON.parse('{"__proto__":"p","constructor":"c"}'))
    })

    it('stores -0 as 0 for duration_ms', () => {
      expect(Object.is(validate({duration_ms: -0}).event.duration_ms, 0)).to.equal(true)
    })
  })

  describe('one failing case per rule', () => {
    it('agent_id: string, 1..256 characters, no control characters', () => {
      expectRefused({agent_id: 7}, 'agent_id', /string/)
      expectRefused({agent_id: null}, 'agent_id', /string/)
      expectRefused({agent_id: ''}, 'agent_id', /empty/)
      expectRefused({agent_id: repeat('a', 257)}, 'agent_id', /at most 256/)
      expectRefused({agent_id: 'a\u0000b'}, 'agent_id', /control/)
      expectRefused({agent_id: 'a\u001fb'}, 'agent_id', /control/)
      expectRefused({agent_id: 'a\u007fb'}, 'agent_id', /control/)
      expectRefused({agent_id: 'a\u0085b'}, 'agent_id', /control/)
      expectRefused({agent_id: 'a\u009fb'}, 'agent_id', /control/)
      expectRefused({agent_id: 'a\ud800'}, 'agent_id', /surrogate/)
    })

    it('counts lengths in code points', () => {
      expect(validate({agent_id: repeat('😀', 256)}).event.agent_id).to.have.length(512)
      expectRefused({agent_id: repeat('😀', 257)}, 'agent_id', /at most 256/)
      // Beyond the C1 controls: no-break space and ÿ are ordinary characters.
      expect(validate({agent_id: 'a\u00a0\u00ffb'}).event.agent_id).to.equal('a\u00a0\u00ffb')
    })

    it('action_type: 1..64 characters of ^[A-Z][A-Z0-9_]*$', () => {
      expect(validate({action_type: repeat('A', 64)}).event.action_type).to.have.length(64)
      expectRefused({action_type: repeat('A', 65)}, 'action_type', /at most 64/)
      for (const bad of ['tool_call', '1TOOL', '_TOOL', 'TOOL-CALL', 'TOOL CALL'])
        expectRefused({action_type: bad}, 'action_type', /must match/)
      expectRefused({action_type: ''}, 'action_type', /empty/)
      expectRefused({action_type: ['TOOL']}, 'action_type', /string/)
    })

    it('action_name: string, 1..256 characters, no control characters', () => {
      expectRefused({action_name: ''}, 'action_name', /empty/)
      expectRefused({action_name: repeat('n', 257)}, 'action_name', /at most 256/)
      expectRefused({action_name: 'line\nbreak'}, 'action_name', /control/)
      expectRefused({action_name: {}}, 'action_name', /string/)
    })

    it('action_status: 1..32 characters of ^[a-z][a-z0-9_]*$', () => {
      expect(validate({action_status: repeat('a', 32)}).event.action_status).to.have.length(32)
      expectRefused({action_status: repeat('a', 33)}, 'action_status', /at most 32/)
      expectRefused({action_status: 'Success'}, 'action_status', /must match/)
      expectRefused({action_status: ''}, 'action_status', /empty/)
    })

    it('id: a UUID', () => {
      for (const bad of [
        'not-a-uuid',
        '0190c1a27b3c7d4e8f900123456789ab',
        '{0190c1a2-7b3c-7d4e-8f90-0123456789ab}',
        '0190c1a2-7b3c-7d4e-8f90-0123456789ag',
        5,
      ]) {
        expectRefused({id: bad}, 'id', /UUID/)
      }
    })

    it('timestamp: RFC 3339 with a time zone', () => {
      expectRefused({timestamp: '2026-11-21T22:45:00'}, 'timestamp', /time zone/)
      expectRefused({timestamp: '2026-13-45T00:00:00Z'}, 'timestamp', /calendar date/)
      expectRefused({timestamp: 'yesterday'}, 'timestamp', /RFC 3339/)
      expectRefused({timestamp: 1763765100000}, 'timestamp', /string/)
    })

    it('labels: an object of at most 64 entries', () => {
      for (const bad of [[], null, 'env=prod', 3]) expectRefused({labels: bad}, 'labels', /object/)
      const many = Object.fromEntries(Array.from({length: 65}, (_, i) => [`k${i}`, 'v']))
      expectRefused({labels: many}, 'labels', /at most 64 entries/)
      const enough = Object.fromEntries(Array.from({length: 64}, (_, i) => [`k${i}`, 'v']))
      expect(Object.keys(validate({labels: enough}).event.labels)).to.have.length(64)
    })

    it('labels: keys ^[A-Za-z0-9_.:-]{1,64}$, values strings of at most 1024 characters', () => {
      expectRefused({labels: {'a b': 'v'}}, 'labels.a b', /key must match/)
      expectRefused({labels: {'': 'v'}}, 'labels.', /key must match/)
      expectRefused({labels: {[repeat('k', 65)]: 'v'}}, `labels.${repeat('k', 65)}`, /key must match/)
      expectRefused({labels: {env: 1}}, 'labels.env', /string/)
      expectRefused({labels: {env: null}}, 'labels.env', /string/)
      expectRefused({labels: {env: repeat('v', 1025)}}, 'labels.env', /at most 1024/)
      expect(
        validate({labels: {[repeat('k', 64)]: repeat('v', 1024), 'a.b:c-d_E9': ''}}).event.labels,
      ).to.have.property('a.b:c-d_E9', '')
    })

    it('session_id, trace_id, span_id, parent_id: strings of 1..256 characters', () => {
      for (const field of ['session_id', 'trace_id', 'span_id', 'parent_id']) {
        expectRefused({[field]: ''}, field, /empty/)
        expectRefused({[field]: repeat('x', 257)}, field, /at most 256/)
        expectRefused({[field]: 12}, field, /string/)
        expectRefused({[field]: null}, field, /string/)
        expect(validate({[field]: repeat('x', 256)}).event).to.have.property(field)
      }
    })

    it('input, output, metadata: any JSON value that RFC 8785 can hash', () => {
      for (const field of ['input', 'output', 'metadata']) {
        expectRefused({[field]: {text: 'a\udc00'}}, field, /unpaired surrogate at \$\.text/)
        expectRefused({[field]: JSON.parse('{"\\ud800":1}')}, field, /key with an unpaired surrogate/)
        expectRefused({[field]: [1, Number.NaN]}, field, /non-finite number at \$\[1\]/)
        expectRefused({[field]: {when: new Date(0)}}, field, /not JSON at \$\.when/)
        expectRefused({[field]: [undefined]}, field, /not JSON/)
      }
    })

    it('input, output, metadata: nesting is bounded', () => {
      const nest = (depth: number) => JSON.parse('['.repeat(depth) + ']'.repeat(depth))
      expect(validate({input: nest(256)}).event.input).to.be.an('array')
      expectRefused({input: nest(257)}, 'input', /nested deeper than 256/)
      expectRefused({input: nest(100_000)}, 'input', /nested deeper/)
    })

    it('error: a string of at most 8192 characters', () => {
      expect(validate({error: ''}).event.error).to.equal('')
      expect(validate({error: repeat('e', 8192)}).event.error).to.have.length(8192)
      expectRefused({error: repeat('e', 8193)}, 'error', /at most 8192/)
      expectRefused({error: {message: 'x'}}, 'error', /string/)
    })

    it('duration_ms: a finite number >= 0', () => {
      expect(validate({duration_ms: 0}).event.duration_ms).to.equal(0)
      expect(validate({duration_ms: 12.5}).event.duration_ms).to.equal(12.5)
      for (const bad of [-1, -0.001, Number.NaN, Number.POSITIVE_INFINITY, '5', null]) {
        expectRefused({duration_ms: bad}, 'duration_ms', /finite number/)
      }
    })
  })
})
