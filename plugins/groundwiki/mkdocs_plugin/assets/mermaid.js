/* groundwiki: mermaid for mkdocs-material, from the site's own copy (vendor/mermaid.min.js,
 * 3.5 MB), loaded by a page only when it shows a diagram.
 *
 * material draws each <pre class="mermaid"> with the global `mermaid` (`initialize`, then
 * `render`), and fetches it from unpkg.com when no script defined that global before the page
 * was shown. This script, loaded after material's on every page of a wiki with diagrams,
 * defines it: a stand-in that keeps material's settings and loads the real library on the first
 * diagram, which then replaces it. A page without a diagram loads nothing more. */
(function () {
  'use strict';

  if (typeof window.mermaid !== 'undefined' && !(window.mermaid instanceof Element)) return;
  var here = document.currentScript ? document.currentScript.src : location.href;
  var url = new URL('vendor/mermaid.min.js', here).href;
  var settings = null;
  var loading = null;
  var stand = {};

  function load() {
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        var script = document.createElement('script');
        script.src = url;
        script.onload = function () {
          var real = window.mermaid;
          if (!real || real === stand) {
            reject(new Error('groundwiki: ' + url + ' defined no mermaid'));
            return;
          }
          if (settings) real.initialize(settings);
          resolve(real);
        };
        script.onerror = function () {
          reject(new Error('groundwiki: could not load ' + url));
        };
        document.head.appendChild(script);
      });
    }
    return loading;
  }

  function later(name) {
    return function () {
      var args = arguments;
      return load().then(function (real) { return real[name].apply(real, args); });
    };
  }

  stand.initialize = function (config) {
    settings = config;
    if (window.mermaid !== stand) window.mermaid.initialize(config);
  };
  stand.render = later('render');
  stand.run = later('run');
  stand.parse = later('parse');
  window.mermaid = stand;
})();
