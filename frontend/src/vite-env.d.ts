/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** Base URL of the API; empty means "same origin" (the API serves the built UI). */
  readonly VITE_API_BASE_URL?: string;
  /** Poll interval of the connection check, ms. */
  readonly VITE_HEALTH_POLL_MS?: string;
}

interface ImportMeta {
  readonly env: ImportMetaEnv;
}
