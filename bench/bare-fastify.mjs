// The baseline of bench/kernel.ts: a bare Fastify hello server, started through npm exactly like the
// service (`npm run --silent bench:bare` beside `npm start --silent`), so both pay npm's and node's own start-up.
import Fastify from 'fastify';

const app = Fastify();
app.get('/api/health', async () => ({ status: 'ok' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.BARE_PORT) });
