/** The trail on PostgreSQL, where appenders of several nodes run their transactions side by side. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openKernelStore, openPostgresTestStore, postgresMissing } from '@talon/testing';
import { Trail } from '../services/trail.ts';

const AUDIT_DIR = path.join(import.meta.dirname, '..');

test('two nodes writing their first entries at once on an empty trail: one chain, no key clash', { skip: postgresMissing() }, async () => {
  const first = await openPostgresTestStore([AUDIT_DIR]);
  // A second connection pool on the same database, as another node has.
  const second = await openKernelStore({ home: '', databaseUrl: first.url });
  try {
    const failures: Error[] = [];
    const trails = [first.store, second.store].map((store) => new Trail(store, (err) => failures.push(err)));
    // Each round starts from an empty trail, where there is no tip row to lock yet.
    for (let round = 0; round < 20; round++) {
      await first.store.exec('DELETE FROM audit_entries; DELETE FROM audit_tip');
      trails.forEach((trail, node) => {
        for (let i = 0; i < 5; i++) trail.record({ event_type: 'appended', agent_id: `node-${node}`, details: { round, i } });
      });
      await Promise.all(trails.map((trail) => trail.flush()));
      assert.deepEqual(failures, [], `no batch failed in round ${round} (the second waited for the first)`);
      const report = await trails[0].verify();
      assert.equal(report.status, 'valid', JSON.stringify(report));
      assert.equal(report.chain_length, 10);
    }
  } finally {
    await second.close();
    await first.close();
  }
});
