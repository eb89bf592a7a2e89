// Runs before the page paints: the saved theme, else the system's.
(function () {
  var t = null;
  try { t = localStorage.getItem('sitter-observe-theme'); } catch (e) {}
  if (t !== 'light' && t !== 'dark') {
    t = window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
  }
  document.documentElement.setAttribute('data-theme', t);
})();
