/**
 * The module's own dashboard view (#/hello): a name to greet, and the service's answer. It is built by the
 * dashboard when the module is loaded from module_paths (docs/modules.md, Dashboard views) and takes the shell's
 * API client and components from `@talon/dashboard-kit`, its one import of the dashboard.
 */
import { useState } from 'preact/hooks';
import { api, ErrorText, seg, useAction } from '@talon/dashboard-kit';

export default function HelloView() {
  const [name, setName] = useState('');
  const [answer, setAnswer] = useState<{ message: string; times: number } | null>(null);
  const action = useAction();
  const greet = action.submit(async () => setAnswer(await api(`/api/hello/${seg(name.trim())}`)));
  return (
    <section>
      <h1>Hello</h1>
      <form class="inline" onSubmit={greet}>
        <label for="hello-name">Name</label>
        <input id="hello-name" value={name} required maxLength={64} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" disabled={action.busy}>
          Greet
        </button>
      </form>
      {answer && (
        <p role="status">
          {answer.message} (greeted {answer.times} {answer.times === 1 ? 'time' : 'times'})
        </p>
      )}
      <ErrorText error={action.error} />
    </section>
  );
}
