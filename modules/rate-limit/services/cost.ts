/**
 * The cost of a request whose route sets no `rateCost`, or that found no route: reads are cheap, writes dearer. A
 * route that starts dear work (an LLM turn, a run, a spawn) names its own price where it is declared, so the limiter
 * knows no path of any module.
 */
export const defaultCost = (method: string): number => (method === 'GET' || method === 'HEAD' || method === 'OPTIONS' ? 1 : 5);
