/**
 * A channel's posts created from a time on, oldest first, read whole however long the gap. `GET
 * /channels/{id}/posts?since=` answers at most 1,000 posts changed after the time, and not the oldest thousand: the
 * server's query limits before it orders, and its reference says "limited till 1000 … no guarantee that the returned
 * posts will be consecutive" (docs.mattermost.com/api/reference/get-posts-for-channel). Below the cap that answer is
 * the whole gap (one request, the usual case). At the cap the gap is read with the documented paging instead: back
 * from the newest post with `before` until a page reaches a post older than the time, then forward from that post
 * with `after`, a page at a time, so no more than a page is held.
 */
import type { MattermostPost } from './inbound.ts';
import type { MattermostRest } from './rest.ts';

export interface HistoryLimits {
  /** The server's cap on a `since` answer. */
  sinceCap: number;
  /** Posts a page (the server's maximum per_page). */
  perPage: number;
}

export const HISTORY_LIMITS: HistoryLimits = { sinceCap: 1000, perPage: 200 };

interface PostList {
  order?: string[];
  posts?: Record<string, MattermostPost>;
}

/** The listed posts, oldest first: `order` holds the page (`posts` also carries thread roots and replies around it). */
const listed = (list: PostList): MattermostPost[] =>
  (list.order ?? [])
    .map((id) => list.posts?.[id])
    .filter((p): p is MattermostPost => typeof p?.create_at === 'number')
    .sort((a, b) => a.create_at - b.create_at);

export async function* postsSince(
  rest: MattermostRest,
  channelId: string,
  since: number,
  signal: AbortSignal,
  limits: HistoryLimits = HISTORY_LIMITS,
): AsyncGenerator<MattermostPost> {
  const get = async (query: string) => (await rest.call<PostList>('GET', `/channels/${encodeURIComponent(channelId)}/posts?${query}`, undefined, signal)).data;
  // `since` answers posts changed strictly after it: one millisecond earlier keeps a post of the cursor's own
  // millisecond that was not read yet (the journal drops the one that was).
  const changed = await get(`since=${since - 1}`);
  if ((changed.order ?? []).length < limits.sinceCap) {
    // It also answers older posts edited since: those were read in their time.
    for (const post of listed(changed)) if (post.create_at >= since) yield post;
    return;
  }
  const found = await findStart(get, since, limits.perPage);
  yield* found.first;
  let start = found.after;
  while (start) {
    const page = listed(await get(`per_page=${limits.perPage}&after=${encodeURIComponent(start)}`));
    for (const post of page) if (post.create_at >= since) yield post;
    if (page.length < limits.perPage) return;
    const next = resumeAfter(page);
    if (next === start) throw new Error(`Mattermost paged no further after post ${start}`);
    start = next;
  }
}

/**
 * Pages back from the newest post until one older than `since`: the forward walk starts after it. When the channel's
 * first page comes first, its posts are all in the gap: they come first, and the walk starts after the newest of them
 * (the page holds every post up to it).
 */
async function findStart(get: (query: string) => Promise<PostList>, since: number, perPage: number): Promise<{ first: MattermostPost[]; after?: string }> {
  let before = '';
  for (;;) {
    const page = listed(await get(`per_page=${perPage}${before ? `&before=${encodeURIComponent(before)}` : ''}`));
    const older = page.filter((p) => p.create_at < since);
    if (older.length) return { first: [], after: older[older.length - 1]!.id };
    if (page.length < perPage) return { first: page, ...(page.length ? { after: page[page.length - 1]!.id } : {}) };
    if (page[0]!.id === before) throw new Error(`Mattermost paged back no further before post ${before}`);
    before = page[0]!.id;
  }
}

/**
 * Where the next forward page starts: after the newest post of an earlier millisecond than the page's last, so posts
 * sharing that millisecond which did not fit the page are not skipped (`after` answers strictly later times); those
 * read twice are dropped by the journal.
 */
function resumeAfter(page: MattermostPost[]): string {
  const last = page[page.length - 1]!;
  for (let i = page.length - 2; i >= 0; i--) if (page[i]!.create_at < last.create_at) return page[i]!.id;
  return last.id;
}
