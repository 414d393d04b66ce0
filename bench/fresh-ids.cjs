// autocannon `setupRequest` for bench/workload-order.ts, as a file because autocannon's worker threads
// load functions by path: every event of every request gets an id of its own, as a client that may
// retry sends them (docs/api.md, idempotent retry), so the store looks each one up before recording.
module.exports = (request) => ({
  ...request,
  body: request.body.replace(/"id":"[^"]*"/g, () => `"id":"${crypto.randomUUID()}"`),
})
