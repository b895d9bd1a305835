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
//
// Graded, as H5P's question contract asks: Your turn's exercises (on unless
// the author says otherwise) give the score (getScore, getMaxScore,
// getAnswerGiven, showSolutions, resetTask), the saved state
// (getCurrentState, and previousState brought back), and each answer as an
// xAPI event through H5P's dispatcher: 'answered' per exercise, 'completed'
// once all are, with the element's statement's result (score, success,
// response, duration, the slip in extensions).

(function (H5P) {
  var ATTRIBUTES = ['widget', 'preset', 'step', 'layout', 'controls', 'theme', 'exercises'];

  // previousState as H5P hands it: an object, or the JSON text it saved.
  function savedExercises(previous) {
    var state = previous;
    if (typeof state === 'string') {
      try {
        state = JSON.parse(state);
      } catch (error) {
        return [];
      }
    }
    return state && Array.isArray(state.exercises) ? state.exercises : [];
  }

  function AttentionWalkthrough(params, contentId, extras) {
    H5P.EventDispatcher.call(this);
    this.params = params || {};
    this.contentId = contentId;
    this.saved = savedExercises(extras && extras.previousState);
    this.element = null;
  }
  AttentionWalkthrough.prototype = Object.create(H5P.EventDispatcher.prototype);
  AttentionWalkthrough.prototype.constructor = AttentionWalkthrough;

  AttentionWalkthrough.prototype.attach = function ($container) {
    var container = $container.get ? $container.get(0) : $container;
    var element = document.createElement('attention-walkthrough');
    var params = this.params;
    var self = this;
    ATTRIBUTES.forEach(function (name) {
      var value = name === 'exercises' ? params.exercises || 'on' : params[name];
      if (value !== undefined && value !== null && value !== '') element.setAttribute(name, String(value));
    });
    element.addEventListener('attention-ready', function () {
      if (self.saved.length && element.widget && element.widget.restoreExercises) {
        element.widget.restoreExercises(self.saved);
      }
    });
    element.addEventListener('attention-xapi', function (event) { self.sendStatement(event.detail); });
    container.classList.add('h5p-attention-walkthrough');
    container.replaceChildren(element);
    this.element = element;
    new ResizeObserver(function () { self.trigger('resize'); }).observe(element);
  };

  // The element's statement as H5P's: its verb, object and actor are H5P's
  // (the content's), its result the element's; an exercise's name and
  // interaction type go into the object's definition.
  AttentionWalkthrough.prototype.sendStatement = function (statement) {
    var verb = statement.verb.display['en-US'];
    var event = this.createXAPIEventTemplate(verb);
    event.data.statement.result = statement.result;
    if (verb === 'answered') {
      var definition = event.data.statement.object.definition || {};
      definition.name = statement.object.definition.name;
      definition.type = statement.object.definition.type;
      definition.interactionType = statement.object.definition.interactionType;
      event.data.statement.object.definition = definition;
    }
    this.trigger(event);
  };

  AttentionWalkthrough.prototype.exercises = function () {
    var widget = this.element && this.element.widget;
    return widget && widget.exercises ? widget.exercises() : { score: 0, max: 0, exercises: this.saved };
  };
  AttentionWalkthrough.prototype.getScore = function () { return this.exercises().score; };
  AttentionWalkthrough.prototype.getMaxScore = function () { return this.exercises().max; };
  AttentionWalkthrough.prototype.getAnswerGiven = function () {
    return this.exercises().exercises.some(function (exercise) { return Boolean(exercise.state); });
  };
  AttentionWalkthrough.prototype.showSolutions = function () {
    var widget = this.element && this.element.widget;
    if (widget && this.params.enableSolutionsButton !== false) widget.showSolutions();
  };
  AttentionWalkthrough.prototype.resetTask = function () {
    var widget = this.element && this.element.widget;
    this.saved = [];
    if (widget) widget.resetExercises();
  };
  AttentionWalkthrough.prototype.getCurrentState = function () {
    return { exercises: this.exercises().exercises.filter(function (exercise) { return Boolean(exercise.state); }) };
  };

  H5P.AttentionWalkthrough = AttentionWalkthrough;
})(window.H5P = window.H5P || {});
