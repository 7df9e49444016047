/** The modules running in the service, so a view asks only for what is there (GET /api/modules, read at sign-in). */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

export const ModulesContext = createContext<ReadonlySet<string>>(new Set());
export const useHasModule = (id: string) => useContext(ModulesContext).has(id);

/** Reads the running modules again (after a module was switched on or off): the navigation follows. */
export const RefreshModulesContext = createContext<() => void>(() => undefined);
export const useRefreshModules = () => useContext(RefreshModulesContext);
