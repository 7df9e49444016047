import { render } from 'preact';
import { App } from './app.tsx';
import { startPwa } from './pwa.ts';
import './styles.css';

render(<App />, document.getElementById('app')!);
startPwa();
