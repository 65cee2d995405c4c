/**
 * A small client-side router on the History API: every view is a URL (path + query string), so
 * deep links, reloads and back/forward work. The server answers the app's HTML for these paths.
 */
import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from 'react';

const NAVIGATE = 'phaselog:navigate';

export interface Place {
  path: string;
  params: URLSearchParams;
}

function here(): Place {
  return { path: window.location.pathname, params: new URLSearchParams(window.location.search) };
}

/** Goes to `url` (pushing a history entry unless `replace`). */
export function navigate(url: string, options: { replace?: boolean } = {}): void {
  if (url === window.location.pathname + window.location.search) return;
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.dispatchEvent(new Event(NAVIGATE));
}

export function usePlace(): Place {
  const [place, setPlace] = useState(here);
  useEffect(() => {
    const update = () => setPlace(here());
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATE, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATE, update);
    };
  }, []);
  return place;
}

/** The current URL with some query parameters set (empty or undefined values removed). */
export function withParams(place: Place, changes: Record<string, string | undefined>): string {
  const params = new URLSearchParams(place.params);
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined || value === '') params.delete(key);
    else params.set(key, value);
  }
  const query = params.toString();
  return place.path + (query ? `?${query}` : '');
}

// Notification messages link to phase pages too: the path is defined once, beside the server's UI code.
export { phasePath } from '../src/ui/paths.ts';

/** An ordinary link (open in a new tab works) that navigates in place on a plain click. */
export function Link(props: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    props.onClick?.(event);
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    )
      return;
    event.preventDefault();
    navigate(props.href);
  };
  return <a {...props} onClick={onClick} />;
}
