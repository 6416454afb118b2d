import { useEffect, useState } from 'react';

/** The screens, addressed by the URL fragment (`#/documents/<id>`), so the web build needs no server routes. */
export type Route =
  | { name: 'documents' }
  | { name: 'document'; id: string }
  | { name: 'notarize' }
  | { name: 'monitors' }
  | { name: 'monitor'; id: string }
  | { name: 'verify' }
  | { name: 'settings' }
  | { name: 'join'; invitationId: string };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  switch (parts[0]) {
    case 'documents':
      return parts[1] ? { name: 'document', id: parts[1] } : { name: 'documents' };
    case 'notarize':
      return { name: 'notarize' };
    case 'monitors':
      return parts[1] ? { name: 'monitor', id: parts[1] } : { name: 'monitors' };
    case 'verify':
      return { name: 'verify' };
    case 'settings':
      return { name: 'settings' };
    case 'join':
      return parts[1] ? { name: 'join', invitationId: parts[1] } : { name: 'documents' };
    default:
      return { name: 'documents' };
  }
}

export function routeHref(route: Route): string {
  switch (route.name) {
    case 'document':
      return `#/documents/${encodeURIComponent(route.id)}`;
    case 'monitor':
      return `#/monitors/${encodeURIComponent(route.id)}`;
    case 'join':
      return `#/join/${encodeURIComponent(route.invitationId)}`;
    default:
      return `#/${route.name}`;
  }
}

export function navigate(route: Route): void {
  window.location.hash = routeHref(route);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
