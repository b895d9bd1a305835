// H5P.AttentionWalkthrough: the walkthrough (or a section) as H5P content,
// for an LMS (Moodle, Canvas, WordPress) where H5P is how interactive
// content is uploaded. scripts/build-h5p.mjs (`make h5p`) puts this after
// the element's self-contained script (web/dist/attention-notebook.js: the
// engine, styles and presets inside, since an H5P host serves a library's
// .js and .css but no .wasm) in the library of build/attention-walkthrough.h5p.
//
// Its parameters (semantics.json) are the element's attributes. H5P sizes
// the iframe it draws content in from the content's height, told by a
// 'resize' event: sent whenever the widget's height changes.

(function (H5P) {
  var ATTRIBUTES = ['widget', 'preset', 'step', 'layout', 'controls', 'theme'];

  function AttentionWalkthrough(params, contentId) {
    H5P.EventDispatcher.call(this);
    this.params = params || {};
    this.contentId = contentId;
  }
  AttentionWalkthrough.prototype = Object.create(H5P.EventDispatcher.prototype);
  AttentionWalkthrough.prototype.constructor = AttentionWalkthrough;

  AttentionWalkthrough.prototype.attach = function ($container) {
    var container = $container.get ? $container.get(0) : $container;
    var element = document.createElement('attention-walkthrough');
    var params = this.params;
    ATTRIBUTES.forEach(function (name) {
      var value = params[name];
      if (value !== undefined && value !== null && value !== '') element.setAttribute(name, String(value));
    });
    container.classList.add('h5p-attention-walkthrough');
    container.replaceChildren(element);
    var self = this;
    new ResizeObserver(function () { self.trigger('resize'); }).observe(element);
  };

  H5P.AttentionWalkthrough = AttentionWalkthrough;
})(window.H5P = window.H5P || {});
