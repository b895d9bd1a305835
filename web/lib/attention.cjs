// The JS API for CommonJS: require('attention-explainer') in Node 18, which
// cannot require an ES module. loadAttention is asynchronous anyway; it
// imports the ES module for Node (web/lib/attention-node.js) and hands the call on.
//
//   const { loadAttention } = require('attention-explainer');
//   const attn = await loadAttention();

'use strict';

const api = () => import('./attention-node.js');

exports.loadAttention = (options) => api().then((module) => module.loadAttention(options));
/** The AttentionError class, once loaded: await loadAttentionError(). */
exports.loadAttentionError = () => api().then((module) => module.AttentionError);
