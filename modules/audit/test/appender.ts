/**
 * Another process appending to the trail (processes.test.ts): opens the database file given, waits for 'go', then
 * appends `rounds` batches of three entries, each batch its own flush and a millisecond apart, and reports how many batches failed and how many entries it could not write.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { openTestStore } from '@talon/testing';
import { Trail } from '../services/trail.ts';

const [file, rounds, tag] = process.argv.slice(2);
const opened = openTestStore([], file);
let failed = 0;
const trail = new Trail(opened.store, () => failed++);

process.once('message', async () => {
  for (let round = 0; round < Number(rounds); round++) {
    for (let i = 0; i < 3; i++) trail.record({ event_type: 'appended', agent_id: tag, details: { round, i } });
    await trail.flush();
    await sleep(1);
  }
  opened.close();
  process.send!({ failed, left: trail.pending() }, () => process.exit(0));
});
process.send!('ready');
