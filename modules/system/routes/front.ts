import type { ModuleContext, Routes } from '@talon/module-sdk';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function frontRoutes(app: Routes, ctx: ModuleContext): void {
  app.get('/', { config: { public: true, rateCost: 1 }, schema: { summary: 'Front page' } }, async (_request, reply) => {
    const version = escape(ctx.kernel.version);
    return reply.type('text/html; charset=utf-8').send(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Talon</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .2rem}</style>
</head>
<body>
<h1>Talon is running</h1>
<p>Agent runtime service, version <code>${version}</code>.</p>
<ul>
<li><a href="/api/health">/api/health</a>: health check</li>
<li><a href="/api/openapi.json">/api/openapi.json</a>: API description (OpenAPI 3.1)</li>
</ul>
</body>
</html>
`);
  });
}
