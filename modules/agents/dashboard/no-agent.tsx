/**
 * The chat with no agent at all. A visit without a route lands on the chat (its `landing` declaration), but a home
 * with no agent is not set up yet: while the system module's home runs, such a visit goes on to the home and its
 * guided setup (modules/system/dashboard/home.tsx). Opened as #/chat on purpose, it says so and links there.
 */
import { useLayoutEffect } from 'preact/hooks';
import { useHasModule } from '@talon/dashboard-kit';

export function NoAgent() {
  const home = useHasModule('system');
  const routeless = location.hash.replace(/^#\/?/, '') === '';
  useLayoutEffect(() => {
    if (home && routeless) location.replace('#/home');
  }, []);
  return (
    <section>
      <h1>Chat</h1>
      <p>There is no agent yet. {home ? <a href="#/home">Set up a first one</a> : <a href="#/agents">Spawn one</a>} first.</p>
    </section>
  );
}
