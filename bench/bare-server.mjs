// The ceiling: a bare node:http server answering the same JSON as GET /v1/models.
import http from 'node:http';

const body = JSON.stringify({
  object: 'list',
  data: [
    { id: 'agent', object: 'model', created: 1767225600, owned_by: 'agent-api' },
    { id: 'agent-think', object: 'model', created: 1767225600, owned_by: 'agent-api' },
  ],
});
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
