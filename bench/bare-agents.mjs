// The baseline of bench/agents.ts: a bare Fastify server started like the service (node, one process), doing the least a
// service in front of a provider must do. POST /message reads the JSON body, streams one chat completion from the provider
// (node:http keep-alive, the SSE read to its end) and answers {response}; GET /list answers the bytes of LIST_FILE.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const provider = new URL(process.env.PROVIDER_URL);
const agent = new http.Agent({ keepAlive: true });
const list = process.env.LIST_FILE ? readFileSync(process.env.LIST_FILE) : Buffer.from('[]');

function complete(message) {
  const payload = JSON.stringify({
    model: 'fake-model',
    messages: [{ role: 'user', content: message }],
    stream: true,
    stream_options: { include_usage: true },
  });
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL('/v1/chat/completions', provider),
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), authorization: 'Bearer x' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          let response = '';
          for (const line of text.split('\n')) {
            if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
            response += JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? '';
          }
          resolve(response);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const app = Fastify();
app.post('/message', async (request) => ({ response: await complete(request.body.message) }));
app.get('/list', async (_request, reply) => reply.type('application/json').send(list));
await app.listen({ host: '127.0.0.1', port: Number(process.env.BARE_PORT) });
