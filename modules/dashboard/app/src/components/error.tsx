/** An API error in plain words, with the request id to quote when asking for help. */
import { ApiError } from '../lib/api.tsx';

export function ErrorText({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const requestId = error instanceof ApiError ? error.requestId : undefined;
  return (
    <p class="error" role="alert">
      {message}
      {requestId && <span class="request-id"> (request {requestId})</span>}
    </p>
  );
}
