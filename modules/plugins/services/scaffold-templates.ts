/**
 * Hook templates of the eleven runtimes. ingest and after_turn work as written (ingest counts the words of the
 * message; after_turn counts the messages it was shown); the other five are stubs that answer {"type":"ok"} and
 * say what a real answer carries. python, node and bash hooks also serve the persistent protocol (one request per
 * line while TALON_PLUGIN_PERSISTENT=1).
 */
import type { Runtime } from './runtimes.ts';

export type TemplateHook = 'ingest' | 'after_turn' | 'stub';

/** The reply each hook builds, as an expression per language family is too varied: each runtime writes its own. */
const WORDS = "The user's message has %d words.";

const python = (hook: TemplateHook, name: string) => `#!/usr/bin/env python3
"""${hook === 'stub' ? 'A stub hook' : `The ${hook} hook`} of ${name}: one JSON request on stdin, one JSON line on stdout."""
import json
import os
import sys


def handle(request):
${
  hook === 'ingest'
    ? `    words = len(str(request.get("message", "")).split())
    return {"type": "ingest_result", "memories": [{"content": f"The user's message has {words} words."}]}`
    : hook === 'after_turn'
      ? `    return {"type": "ok", "messages_seen": len(request.get("messages", []))}`
      : `    # assemble answers {"type": "assemble_result", "messages": [...], "system_prompt": "..."};
    # compact answers {"type": "compact_result", "summary": "..."}; the others {"type": "ok"}.
    return {"type": "ok"}`
}


if os.environ.get("TALON_PLUGIN_PERSISTENT") == "1":
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(handle(json.loads(line))), flush=True)
else:
    print(json.dumps(handle(json.loads(sys.stdin.read() or "{}"))))
`;

const jsHandle = (hook: TemplateHook, typed: boolean) => {
  const req = typed ? '(request: Record<string, unknown>)' : '(request)';
  if (hook === 'ingest')
    return `const handle = ${req} => {
  const words = String(request.message ?? '').split(/\\s+/).filter(Boolean).length;
  return { type: 'ingest_result', memories: [{ content: \`The user's message has \${words} words.\` }] };
};`;
  if (hook === 'after_turn') return `const handle = ${req} => ({ type: 'ok', messages_seen: Array.isArray(request.messages) ? request.messages.length : 0 });`;
  return `// assemble answers {type: 'assemble_result', messages, system_prompt}; compact {type: 'compact_result', summary}; the others {type: 'ok'}.
const handle = ${typed ? '(_request: Record<string, unknown>)' : '(_request)'} => ({ type: 'ok' });`;
};

const node = (
  hook: TemplateHook,
  name: string,
) => `// ${hook === 'stub' ? 'A stub hook' : `The ${hook} hook`} of ${name}: one JSON request on stdin, one JSON line on stdout.
${jsHandle(hook, false)}

let input = '';
process.stdin.setEncoding('utf8');
if (process.env.TALON_PLUGIN_PERSISTENT === '1') {
  // Persistent: one request per line, one answer per line.
  process.stdin.on('data', (chunk) => {
    input += chunk;
    let nl;
    while ((nl = input.indexOf('\\n')) >= 0) {
      const line = input.slice(0, nl).trim();
      input = input.slice(nl + 1);
      if (line) process.stdout.write(JSON.stringify(handle(JSON.parse(line))) + '\\n');
    }
  });
} else {
  process.stdin.on('data', (chunk) => (input += chunk));
  process.stdin.on('end', () => process.stdout.write(JSON.stringify(handle(JSON.parse(input || '{}'))) + '\\n'));
}
`;

const deno = (
  hook: TemplateHook,
  name: string,
) => `// ${hook === 'stub' ? 'A stub hook' : `The ${hook} hook`} of ${name} (Deno): one JSON request on stdin, one JSON line on stdout.
${jsHandle(hook, true)}

const input = await new Response(Deno.stdin.readable).text();
console.log(JSON.stringify(handle(JSON.parse(input || '{}'))));
`;

const bun = (
  hook: TemplateHook,
  name: string,
) => `// ${hook === 'stub' ? 'A stub hook' : `The ${hook} hook`} of ${name} (Bun): one JSON request on stdin, one JSON line on stdout.
${jsHandle(hook, true)}

const input = await Bun.stdin.text();
console.log(JSON.stringify(handle(JSON.parse(input || '{}'))));
`;

const go = (
  hook: TemplateHook,
  name: string,
) => `// ${hook === 'stub' ? 'A stub hook' : `The ${hook} hook`} of ${name}: one JSON request on stdin, one JSON line on stdout.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"${hook === 'ingest' ? '\n\t"strings"' : ''}
)

func main() {
	data, _ := io.ReadAll(os.Stdin)
	var request map[string]any
	_ = json.Unmarshal(data, &request)
${
  hook === 'ingest'
    ? `	message, _ := request["message"].(string)
	reply := map[string]any{"type": "ingest_result", "memories": []map[string]string{{"content": fmt.Sprintf("${WORDS}", len(strings.Fields(message)))}}}`
    : hook === 'after_turn'
      ? `	messages, _ := request["messages"].([]any)
	reply := map[string]any{"type": "ok", "messages_seen": len(messages)}`
      : `	// assemble answers {"type": "assemble_result", "messages": [...]}; compact {"type": "compact_result", "summary": "..."}.
	_ = request
	reply := map[string]any{"type": "ok"}`
}
	out, _ := json.Marshal(reply)
	fmt.Println(string(out))
}
`;

const ruby = (
  hook: TemplateHook,
  name: string,
) => `# ${hook === 'stub' ? 'A stub hook' : `The ${hook} hook`} of ${name}: one JSON request on stdin, one JSON line on stdout.
require 'json'

request = JSON.parse($stdin.read.then { |s| s.empty? ? '{}' : s })
${
  hook === 'ingest'
    ? `words = request.fetch('message', '').to_s.split.size
reply = { type: 'ingest_result', memories: [{ content: "The user's message has #{words} words." }] }`
    : hook === 'after_turn'
      ? `reply = { type: 'ok', messages_seen: Array(request['messages']).size }`
      : `# assemble answers {type: 'assemble_result', messages: [...]}; compact {type: 'compact_result', summary: '...'}.
reply = { type: 'ok' }`
}
puts JSON.generate(reply)
`;

const php = (hook: TemplateHook, name: string) => `<?php
// ${hook === 'stub' ? 'A stub hook' : `The ${hook} hook`} of ${name}: one JSON request on stdin, one JSON line on stdout.
$request = json_decode(stream_get_contents(STDIN) ?: '{}', true) ?? [];
${
  hook === 'ingest'
    ? `$words = str_word_count((string)($request['message'] ?? ''));
$reply = ['type' => 'ingest_result', 'memories' => [['content' => "The user's message has $words words."]]];`
    : hook === 'after_turn'
      ? `$reply = ['type' => 'ok', 'messages_seen' => count($request['messages'] ?? [])];`
      : `// assemble answers ['type' => 'assemble_result', 'messages' => [...]]; compact ['type' => 'compact_result', 'summary' => '...'].
$reply = ['type' => 'ok'];`
}
echo json_encode($reply), "\\n";
`;

const lua = (
  hook: TemplateHook,
  name: string,
) => `-- ${hook === 'stub' ? 'A stub hook' : `The ${hook} hook`} of ${name}: one JSON request on stdin, one JSON line on stdout.
-- Lua has no JSON library of its own: this template reads the fields it needs with patterns.
local input = io.read("a") or ""
${
  hook === 'ingest'
    ? `local message = input:match('"message"%s*:%s*"(.-[^\\\\])"') or ""
local words = 0
for _ in message:gmatch("%S+") do words = words + 1 end
print(string.format('{"type":"ingest_result","memories":[{"content":"The user\\'s message has %d words."}]}', words))`
    : hook === 'after_turn'
      ? `local seen = 0
for _ in input:gmatch('"role"%s*:') do seen = seen + 1 end
print(string.format('{"type":"ok","messages_seen":%d}', seen))`
      : `-- assemble answers {"type":"assemble_result","messages":[...]}; compact {"type":"compact_result","summary":"..."}.
print('{"type":"ok"}')`
}
`;

const v = (
  hook: TemplateHook,
  name: string,
) => `// ${hook === 'stub' ? 'A stub hook' : `The ${hook} hook`} of ${name}: one JSON request on stdin, one JSON line on stdout.
import json
import os

struct Request {
	message  string
	messages []json.Any
}

fn main() {
	input := os.get_raw_lines_joined()
	request := json.decode(Request, input) or { Request{} }
${
  hook === 'ingest'
    ? `	words := request.message.fields().len
	println('{"type":"ingest_result","memories":[{"content":"The user\\'s message has \${words} words."}]}')`
    : hook === 'after_turn'
      ? `	println('{"type":"ok","messages_seen":\${request.messages.len}}')`
      : `	// assemble answers {"type":"assemble_result","messages":[...]}; compact {"type":"compact_result","summary":"..."}.
	_ = request
	println('{"type":"ok"}')`
}
}
`;

/** POSIX sh: bash hooks and native (executable) stubs. Fields are read with sed; a real hook would use jq. */
const shell = (shebang: string) => (hook: TemplateHook, name: string) => `${shebang}
# ${hook === 'stub' ? 'A stub hook' : `The ${hook} hook`} of ${name}: one JSON request on stdin, one JSON line on stdout.
handle() {
${
  hook === 'ingest'
    ? `  words=$(printf '%s' "$1" | sed -n 's/.*"message"[[:space:]]*:[[:space:]]*"\\([^"]*\\)".*/\\1/p' | wc -w)
  printf '{"type":"ingest_result","memories":[{"content":"The user'"'"'s message has %d words."}]}\\n' "$((words))"`
    : hook === 'after_turn'
      ? `  seen=$(printf '%s' "$1" | grep -o '"role"' | wc -l)
  printf '{"type":"ok","messages_seen":%d}\\n' "$((seen))"`
      : `  # assemble answers {"type":"assemble_result","messages":[...]}; compact {"type":"compact_result","summary":"..."}.
  printf '{"type":"ok"}\\n'`
}
}
if [ "\${TALON_PLUGIN_PERSISTENT:-}" = 1 ]; then
  while IFS= read -r line; do [ -n "$line" ] && handle "$line"; done
else
  handle "$(cat)"
fi
`;

export const TEMPLATES: Record<Runtime, (hook: TemplateHook, name: string) => string> = {
  python,
  native: shell('#!/bin/sh'),
  v,
  node,
  deno,
  go,
  ruby,
  bash: shell('#!/usr/bin/env bash'),
  bun,
  php,
  lua,
};

/** Runtimes whose templates answer the persistent protocol. */
export const PERSISTENT_TEMPLATES: readonly Runtime[] = ['python', 'node', 'bash', 'native'];
