/** The modules running in the service, so a view asks only for what is there (GET /api/modules, read at sign-in). */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

export const ModulesContext = createContext<ReadonlySet<string>>(new Set());
export const useHasModule = (id: string) => useContext(ModulesContext).has(id);
