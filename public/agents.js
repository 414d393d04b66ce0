// The agents view: one row per agent chain from /v1/agents; the agent's name opens its events.

import {getJson} from './api.js'
import {byId, fill, formatNumber, formatTime, h, shortHash, verdict} from './dom.js'

export async function show(_route, context) {
  await refresh(context)
}

export async function refresh() {
  const agents = await getJson('/v1/agents')
  fill(
    'agents-body',
    agents.map((agent) =>
      h(
        'tr',
        {},
        h(
          'th',
          {scope: 'row'},
          h('a', {href: `#/events?${new URLSearchParams({agent_id: agent.agent_id})}`}, agent.agent_id),
        ),
        h('td', {class: 'num'}, formatNumber(agent.event_count)),
        h('td', {}, formatTime(agent.first_activity)),
        h('td', {}, formatTime(agent.last_activity)),
        h('td', {class: 'num'}, formatNumber(agent.last_sequence)),
        h('td', {}, shortHash(agent.head_hash)),
        h('td', {class: 'chain'}, verdict(agent.chain_valid, 'verifies', 'broken')),
      ),
    ),
  )
  byId('agents-empty').hidden = agents.length > 0
}
