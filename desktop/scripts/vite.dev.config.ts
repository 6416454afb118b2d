/**
 * `npm run dev:web -w @notary/desktop`: the renderer with live reload on http://localhost:5173, the API proxied
 * to a service on http://localhost:3000 (`npm start`). The proxy presents the service's own origin, which the
 * service accepts; nothing else changes from the built web client.
 */
import { defineConfig } from 'vite';
import { webConfig } from './vite-config';

const target = process.env.NOTARY_DEV_SERVER ?? 'http://localhost:3000';
const proxy = { target, changeOrigin: true, headers: { origin: new URL(target).origin } };

// `configFile: false` belongs to the programmatic builds only.
const { configFile: _ignored, ...renderer } = webConfig;

export default defineConfig({
  ...renderer,
  server: {
    port: 5173,
    strictPort: true,
    proxy: { '/api': proxy, '/trpc': proxy, '/health': proxy, '/files': proxy },
  },
});
