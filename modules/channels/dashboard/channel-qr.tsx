/**
 * QR sign-in (adapters with `capabilities.qr`): starts a sign-in, draws its code as an image in the browser (qrcode),
 * and polls its status every 2 s until it is authenticated, or expired/failed (a 410 saying so; start again). A pending
 * status names the code to show now: a platform that rotates its code gets the new one drawn.
 */
import { useEffect, useState } from 'preact/hooks';
import QRCode from 'qrcode';
import { api, ApiError, ErrorText, fmtTime, seg, useAction } from '@talon/dashboard-kit';

interface Started {
  status: 'pending' | 'scanned';
  qr_code: string;
  expires_at: string;
}
type Status = 'pending' | 'scanned' | 'authenticated' | 'expired' | 'failed';

const POLL_MS = 2000;
const WORDS: Record<Status, string> = {
  pending: 'Waiting for the code to be scanned',
  scanned: 'Scanned: confirm the sign-in on the phone',
  authenticated: 'Signed in: the channel starts',
  expired: 'The code expired: start again',
  failed: 'The sign-in failed: start again',
};

export function QrSignIn({ name, onSignedIn }: { name: string; onSignedIn: () => Promise<void> }) {
  const base = `/api/channels/${seg(name)}/qr`;
  const action = useAction();
  const [session, setSession] = useState<Started | undefined>();
  const [image, setImage] = useState<string | undefined>();
  const [status, setStatus] = useState<Status | undefined>();
  const [problem, setProblem] = useState<string | undefined>();

  useEffect(() => {
    if (!session) return;
    let live = true;
    void QRCode.toDataURL(session.qr_code, { width: 240, margin: 1, errorCorrectionLevel: 'M' }).then((url) => live && setImage(url));
    return () => void (live = false);
  }, [session?.qr_code]);

  useEffect(() => {
    if (!session || status === 'authenticated' || status === 'expired' || status === 'failed') return;
    const timer = setInterval(() => {
      api<{ status: Status; qr_code?: string; expires_at?: string }>(`${base}/status`).then(
        (r) => {
          setStatus(r.status);
          // The platform rotated the code (WhatsApp Web): show the one that can be scanned now.
          if (r.qr_code && r.expires_at && r.qr_code !== session.qr_code) setSession({ status: 'pending', qr_code: r.qr_code, expires_at: r.expires_at });
          if (r.status === 'authenticated') void onSignedIn();
        },
        (err: unknown) => {
          // 410: the sign-in is over; its body says whether it expired or failed, and why.
          const body = err instanceof ApiError ? (err.body as { status?: Status; error?: string } | undefined) : undefined;
          setStatus(body?.status === 'expired' || body?.status === 'failed' ? body.status : 'failed');
          setProblem(err instanceof Error ? err.message : String(err));
        },
      );
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [session, status, base, onSignedIn]);

  const start = () =>
    void action.run(async () => {
      const r = await api<Started>(`${base}/start`, { json: {} });
      setImage(undefined);
      setProblem(undefined);
      setStatus(r.status);
      setSession(r);
    });
  const over = !session || status === 'authenticated' || status === 'expired' || status === 'failed';
  return (
    <div class="card" aria-labelledby="qr-title">
      <h2 id="qr-title">Sign in with a QR code</h2>
      <button type="button" class="primary" disabled={action.busy || !over} onClick={start}>
        {session ? 'Start again' : 'Show the QR code'}
      </button>
      <ErrorText error={action.error} />
      {session && status && (
        <>
          <p role="status">{WORDS[status]}</p>
          {problem && <p class="warn">{problem}</p>}
          {(status === 'pending' || status === 'scanned') && image && (
            <>
              <img src={image} alt={`QR code to sign ${name} in`} width={240} height={240} />
              <p class="muted">Valid until {fmtTime(session.expires_at)}.</p>
            </>
          )}
        </>
      )}
    </div>
  );
}
