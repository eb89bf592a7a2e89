// Live updates (server-sent events: the page's <main> is fetched again
// when anything it shows changed), keyboard navigation and the theme.
(function () {
  'use strict';
  var sel = null; // data-key of the selected item
  var pending = false;

  function items() {
    return Array.prototype.filter.call(document.querySelectorAll('main .nav-item'), function (el) {
      return !el.classList.contains('hidden');
    });
  }
  function select(el) {
    document.querySelectorAll('main .nav-item.selected').forEach(function (x) { x.classList.remove('selected'); });
    if (!el) { sel = null; return; }
    el.classList.add('selected');
    sel = el.getAttribute('data-key');
    el.scrollIntoView({ block: 'nearest' });
  }
  function restore() {
    if (sel === null) return;
    var all = items();
    for (var i = 0; i < all.length; i++) {
      if (all[i].getAttribute('data-key') === sel) { all[i].classList.add('selected'); return; }
    }
  }
  function applyFilter() {
    var q = document.getElementById('filter').value.toLowerCase();
    document.querySelectorAll('main .nav-item').forEach(function (el) {
      el.classList.toggle('hidden', q !== '' && el.textContent.toLowerCase().indexOf(q) < 0);
    });
  }
  function editing() {
    var a = document.activeElement;
    return a && a.closest && a.closest('main') && (a.tagName === 'TEXTAREA' || a.tagName === 'INPUT' || a.tagName === 'SELECT');
  }
  function refresh() {
    if (editing()) { pending = true; return; }
    pending = false;
    fetch(location.href, { credentials: 'same-origin', cache: 'no-store' }).then(function (r) {
      // 404 is a page too: the run was deleted (the server says so).
      if (!r.ok && r.status !== 404) throw new Error(r.status);
      return r.text();
    }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, 'text/html');
      var m = doc.getElementById('main');
      if (!m) return;
      document.getElementById('main').innerHTML = m.innerHTML;
      document.title = doc.title;
      applyFilter();
      restore();
      document.body.setAttribute('data-refreshed', String(Date.now()));
    }).catch(function () {});
  }
  document.addEventListener('focusout', function () { if (pending) setTimeout(refresh, 0); });

  function connect() {
    var live = document.getElementById('live');
    var es = new EventSource('/events');
    es.addEventListener('hello', function () { live.textContent = 'live'; live.classList.add('on'); });
    es.addEventListener('changed', function () { refresh(); });
    es.onerror = function () { live.textContent = 'reconnecting…'; live.classList.remove('on'); };
  }

  document.addEventListener('keydown', function (e) {
    var f = document.getElementById('filter');
    var t = e.target;
    if (e.key === 'Escape' && t === f) { f.blur(); return; }
    if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT') || e.ctrlKey || e.metaKey || e.altKey) return;
    var all = items();
    var i = all.findIndex(function (el) { return el.classList.contains('selected'); });
    if (e.key === 'j' || e.key === 'k') {
      e.preventDefault();
      if (all.length === 0) return;
      i = e.key === 'j' ? Math.min(i + 1, all.length - 1) : Math.max(i - 1, 0);
      select(all[i]);
    } else if (e.key === 'Enter' && i >= 0) {
      var el = all[i];
      var a = el.tagName === 'A' ? el : el.querySelector('a, textarea, button');
      if (a) { e.preventDefault(); if (a.tagName === 'A') { location.href = a.href; } else { a.focus(); } }
    } else if (e.key === '/') {
      e.preventDefault();
      f.focus();
      f.select();
    }
  });

  document.addEventListener('DOMContentLoaded', function () {
    document.getElementById('filter').addEventListener('input', applyFilter);
    document.getElementById('theme').addEventListener('click', function () {
      var now = document.documentElement.getAttribute('data-theme') === 'dark' ? 'light' : 'dark';
      document.documentElement.setAttribute('data-theme', now);
      try { localStorage.setItem('sitter-observe-theme', now); } catch (e) {}
    });
    connect();
  });
})();
