// The json-tools skill: reads {"tool", "input"} on stdin and prints one JSON answer on stdout.
'use strict';

function query(doc, path) {
  let value = doc;
  for (const key of path.split('.').filter(Boolean)) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, key)) {
      return { error: `no value at '${path}' (stopped at '${key}')` };
    }
    value = value[key];
  }
  return { value };
}

function run(request) {
  const { tool, input } = request;
  let doc;
  try {
    doc = JSON.parse(input.json);
  } catch (err) {
    return { error: `invalid JSON: ${err.message}` };
  }
  if (tool === 'json_query') return query(doc, input.path);
  if (tool === 'json_format') return { result: JSON.stringify(doc, null, input.indent ?? 2) };
  return { error: `unknown tool '${tool}'` };
}

let data = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => (data += chunk));
process.stdin.on('end', () => process.stdout.write(JSON.stringify(run(JSON.parse(data)))));
