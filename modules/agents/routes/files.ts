/**
 * The agent's private workspace ($TALON_HOME/workspaces/<agent id>): list,
 * download, write, delete. Every path goes through safeJoin, so `..`,
 * absolute paths and symlinks leading outside are refused with 400.
 *
 * PUT body: raw bytes (application/octet-stream), text (text/*), or JSON
 * {content: string, encoding?: "utf8" | "base64"}.
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { badRequest, notFound, safeJoin, type Routes } from '@talon/module-sdk';
import type { AgentRecord } from '@talon/agents';
import type { AgentServices } from '../services/context.ts';
import { classify } from '../services/attachments.ts';
import { agentParam, idParams } from './common.ts';

const fileParams = { type: 'object', properties: { id: { type: 'string' }, filename: { type: 'string' } }, required: ['id', 'filename'] } as const;
const MAX_LISTED = 1000;

export function fileRoutes(app: Routes, s: AgentServices): void {
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.get('/api/agents/:id/files', { schema: { summary: "Files in the agent's workspace", params: idParams } }, async (request) => {
    const agent = agentParam(s, request.params.id);
    const root = workspace(agent);
    const files: Array<{ name: string; size: number; modified_at: string }> = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (files.length >= MAX_LISTED) return;
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (entry.isFile()) {
          const st = statSync(full);
          files.push({ name: path.relative(root, full).split(path.sep).join('/'), size: st.size, modified_at: st.mtime.toISOString() });
        }
      }
    };
    walk(root);
    return { agent_id: agent.id, files, total: files.length };
  });

  app.get('/api/agents/:id/files/:filename', { schema: { summary: 'Download a workspace file', params: fileParams } }, async (request, reply) => {
    const agent = agentParam(s, request.params.id);
    const file = existingFile(agent, request.params.filename);
    const type = classify(file, '') === 'text' ? 'text/plain; charset=utf-8' : 'application/octet-stream';
    return reply.type(type).send(readFileSync(file));
  });

  app.put('/api/agents/:id/files/:filename', { schema: { summary: 'Write (create or overwrite) a workspace file', params: fileParams } }, async (request) => {
    const agent = agentParam(s, request.params.id);
    const target = safeJoin(workspace(agent), request.params.filename);
    const data = bodyBytes(request.body);
    if (existsAsDir(target)) throw badRequest(`'${request.params.filename}' is a directory`);
    mkdirSync(path.dirname(target), { recursive: true });
    // Created folders must not have opened a way out (a symlinked parent): check again.
    safeJoin(workspace(agent), request.params.filename);
    writeFileSync(target, data);
    return { status: 'written', agent_id: agent.id, filename: request.params.filename, size: data.length };
  });

  app.delete('/api/agents/:id/files/:filename', { schema: { summary: 'Delete a workspace file', params: fileParams } }, async (request) => {
    const agent = agentParam(s, request.params.id);
    rmSync(existingFile(agent, request.params.filename));
    return { status: 'deleted', agent_id: agent.id, filename: request.params.filename };
  });
}

function workspace(agent: AgentRecord): string {
  mkdirSync(agent.workspace, { recursive: true });
  return agent.workspace;
}

function existingFile(agent: AgentRecord, filename: string): string {
  const file = safeJoin(workspace(agent), filename);
  let st;
  try {
    st = lstatSync(file);
  } catch {
    throw notFound(`file '${filename}' not found in the workspace`);
  }
  if (!st.isFile()) throw badRequest(`'${filename}' is not a regular file`);
  return file;
}

function existsAsDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function bodyBytes(body: unknown): Buffer {
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body && typeof body === 'object' && typeof (body as { content?: unknown }).content === 'string') {
    const { content, encoding } = body as { content: string; encoding?: unknown };
    if (encoding === undefined || encoding === 'utf8' || encoding === 'utf-8') return Buffer.from(content, 'utf8');
    if (encoding === 'base64') return Buffer.from(content, 'base64');
    throw badRequest(`unknown encoding '${String(encoding)}': use utf8 or base64`);
  }
  throw badRequest('send the file as raw bytes (application/octet-stream), text, or JSON {content, encoding?}');
}
