/** Light and dark themes: the system's choice until the person picks one (kept in localStorage, not a secret). */
import { useEffect, useState } from 'preact/hooks';

type Theme = 'light' | 'dark';
const STORE = 'talon.theme';

function initial(): Theme {
  const saved = localStorage.getItem(STORE);
  if (saved === 'light' || saved === 'dark') return saved;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(initial);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
  const next: Theme = theme === 'dark' ? 'light' : 'dark';
  return (
    <button
      type="button"
      onClick={() => {
        localStorage.setItem(STORE, next);
        setTheme(next);
      }}
    >
      {next === 'dark' ? 'Dark theme' : 'Light theme'}
    </button>
  );
}
