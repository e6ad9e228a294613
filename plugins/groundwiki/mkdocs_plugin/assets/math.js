/* groundwiki: the formulas pymdownx.arithmatex marks (generic mode: `\(...\)` in a
 * <span class="arithmatex">, `\[...\]` in a <div class="arithmatex">), typeset with the site's
 * own copy of KaTeX (vendor/katex/: its script, stylesheet and woff2 fonts), which a page loads
 * only when it shows a formula. Each page material shows is typeset once it is in place
 * (material's `document$`, instant navigation included). A formula KaTeX cannot read is shown
 * as its source, in KaTeX's error colour. */
(function () {
  'use strict';

  var here = document.currentScript ? document.currentScript.src : location.href;
  var base = new URL('vendor/katex/', here).href;
  var PAIRS = [['\\(', '\\)'], ['\\[', '\\]']];
  var loading = null;

  function load() {
    if (typeof katex !== 'undefined') return Promise.resolve();
    if (!loading) {
      var style = document.createElement('link');
      style.rel = 'stylesheet';
      style.href = base + 'katex.min.css';
      document.head.appendChild(style);
      loading = new Promise(function (resolve, reject) {
        var script = document.createElement('script');
        script.src = base + 'katex.min.js';
        script.onload = function () { resolve(); };
        script.onerror = function () {
          reject(new Error('groundwiki: could not load ' + script.src));
        };
        document.head.appendChild(script);
      });
    }
    return loading;
  }

  function source(element) {
    var text = element.textContent.trim();
    for (var i = 0; i < PAIRS.length; i++) {
      var open = PAIRS[i][0], close = PAIRS[i][1];
      if (text.length >= 4 && text.slice(0, 2) === open && text.slice(-2) === close) {
        return text.slice(2, -2);
      }
    }
    return text;
  }

  function typeset(root) {
    var formulas = root.querySelectorAll('.arithmatex:not(.gw-math)');
    if (!formulas.length) return;
    load().then(function () {
      for (var i = 0; i < formulas.length; i++) {
        var element = formulas[i];
        if (element.classList.contains('gw-math')) continue;
        element.classList.add('gw-math');
        katex.render(source(element), element, {
          displayMode: element.tagName !== 'SPAN',
          throwOnError: false,
        });
      }
    });
  }

  if (typeof document$ !== 'undefined' && document$ && document$.subscribe) {
    document$.subscribe(function () { typeset(document.body); });
  } else if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', function () { typeset(document.body); });
  } else {
    typeset(document.body);
  }
})();
