// autocannon `setupRequest` for the "every request another page" row of bench/run.ts, as a file
// because autocannon's worker threads load functions by path. Each request asks for a page not
// asked before: agents 0-49 in turn, the offset one further each time round.
let k = 0
module.exports = (request) => {
  const page = k++
  return {...request, path: `/v1/events?agent_id=agent-${page % 50}&limit=100&offset=${Math.floor(page / 50)}`}
}
