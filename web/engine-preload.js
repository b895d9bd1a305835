// Starts fetching the page's engine while app.js's modules load, as a
// <link rel="preload"> in index.html would: the file depends on what this
// browser runs (lib/engine-file.js: relaxed SIMD, SIMD or scalar), which
// HTML cannot ask. app.js's fetch of the same URL takes this response.

import { pageEngineUrl } from './lib/engine-file.js';

const link = document.createElement('link');
link.rel = 'preload';
link.as = 'fetch';
link.crossOrigin = 'anonymous';
link.href = pageEngineUrl().href;
document.head.append(link);
