/**
 * phaselog's web UI: the fleet board, phase pages and clusters, on the same GraphQL API the CLI
 * uses. Bundled ahead of time (src/ui/bundle.ts); served by the API process.
 */
import { StrictMode, useEffect, useState, type FormEvent } from 'react';
import { createRoot } from 'react-dom/client';
import { saveToken, readToken, useQuery } from './api.ts';
import { Board } from './board.tsx';
import { ClustersPage } from './clusters-page.tsx';
import { PhasePage } from './phase-page.tsx';
import { ReportsPage } from './reports-page.tsx';
import { Link, usePlace, type Place } from './router.tsx';
import './styles.css';

interface Viewer {
  name: string;
  anonymous: boolean;
  scopes: string[];
  clusters: string[];
  namespaces: string[];
}

const WHO = `{ viewer { name anonymous scopes clusters namespaces } about { version } }`;

function scopeText(viewer: Viewer): string {
  const where = [
    viewer.clusters.length ? `clusters ${viewer.clusters.join(', ')}` : '',
    viewer.namespaces.length ? `namespaces ${viewer.namespaces.join(', ')}` : '',
  ].filter(Boolean);
  return `${viewer.scopes.join(', ')}${where.length ? ' · only ' + where.join('; ') : ' · everything'}`;
}

function SignIn({ error, onToken }: { error: string | undefined; onToken: (token: string) => void }) {
  const [token, setToken] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (token.trim()) onToken(token.trim());
  };
  return (
    <main className="sign-in">
      <h1>Sign in to phaselog</h1>
      <p>
        This server needs an API token (create one with <code>phaselog token create &lt;name&gt;</code>). It is kept in
        this tab's session storage only.
      </p>
      <form onSubmit={submit}>
        <label>
          API token{' '}
          <input
            type="password"
            autoComplete="off"
            value={token}
            onChange={(e) => setToken(e.target.value)}
            autoFocus
          />
        </label>{' '}
        <button type="submit">Sign in</button>
      </form>
      {error ? (
        <p role="alert" className="error">
          {error}
        </p>
      ) : null}
    </main>
  );
}

function Page({ place }: { place: Place }) {
  if (place.path === '/') return <Board place={place} />;
  if (place.path === '/clusters') return <ClustersPage />;
  if (place.path === '/reports') return <ReportsPage place={place} />;
  const phase = /^\/phases\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(place.path);
  if (phase) {
    const [cluster, namespace, name] = phase.slice(1).map(decodeURIComponent) as [string, string, string];
    return <PhasePage key={place.path} place={place} cluster={cluster} namespace={namespace} name={name} />;
  }
  return (
    <main>
      <h1>Not found</h1>
      <p>
        No view at {place.path}. <Link href="/">Back to the fleet board</Link>.
      </p>
    </main>
  );
}

function App() {
  const place = usePlace();
  const [session, setSession] = useState(0);
  const who = useQuery<{ viewer: Viewer; about: { version: string } }>(WHO, { session });
  const needsToken =
    who.error?.code === 'UNAUTHENTICATED' ||
    (who.error !== undefined && !readToken() && who.error.code === 'FORBIDDEN');
  useEffect(() => {
    const title =
      place.path === '/'
        ? 'Fleet board'
        : place.path === '/clusters'
          ? 'Clusters'
          : place.path === '/reports'
            ? 'Reports'
            : place.path.startsWith('/phases/')
              ? decodeURIComponent(place.path.slice(8))
              : 'phaselog';
    document.title = `${title} · phaselog`;
  }, [place.path]);
  const signIn = (token: string | undefined) => {
    saveToken(token);
    setSession((s) => s + 1);
  };
  if (needsToken) return <SignIn error={readToken() ? who.error?.message : undefined} onToken={signIn} />;
  const viewer = who.data?.viewer;
  return (
    <>
      <a className="skip" href="#content">
        Skip to content
      </a>
      <header className="top">
        <Link href="/" className="brand">
          phaselog
        </Link>
        <nav aria-label="Main">
          <Link href="/" aria-current={place.path === '/' ? 'page' : undefined}>
            Fleet board
          </Link>
          <Link href="/clusters" aria-current={place.path === '/clusters' ? 'page' : undefined}>
            Clusters
          </Link>
          <Link href="/reports" aria-current={place.path === '/reports' ? 'page' : undefined}>
            Reports
          </Link>
          <a href="/graphql">GraphiQL</a>
        </nav>
        <div className="who">
          {viewer ? (
            <>
              <span>{viewer.anonymous ? 'anonymous reader' : `signed in as ${viewer.name}`}</span>{' '}
              <span className="muted">({scopeText(viewer)})</span>
              {viewer.anonymous ? null : (
                <button type="button" onClick={() => signIn(undefined)}>
                  Sign out
                </button>
              )}
            </>
          ) : who.error ? (
            <span className="error">{who.error.message}</span>
          ) : null}
          {who.data ? <span className="muted"> v{who.data.about.version}</span> : null}
        </div>
      </header>
      <div id="content" tabIndex={-1}>
        {/* The page asks for its data while who-am-I is on its way: one round trip, not two in a row. */}
        {who.error ? null : <Page key={session} place={place} />}
      </div>
    </>
  );
}

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
