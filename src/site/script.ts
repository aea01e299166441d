/** Where every site serves its one script, under its own path (the CSP allows scripts of this origin only). */
export const SCRIPT_PATH = '/assets/site.js'

/**
 * The one script of the portal and the admin, progressive enhancement only (every page works
 * without it):
 * - a "Copy" button after each `data-copy` or `data-secret` element: it copies the field's value
 *   or the element's text; a non-empty `data-copy` is the button's accessible name; an element
 *   `#copy-status` announces the copy with its `data-copied` text;
 * - a dialog instead of the confirmation page for forms with `data-confirm` (its sentence).
 */
export const SCRIPT = `
var said = document.getElementById('copy-status');
document.querySelectorAll('[data-secret],[data-copy]').forEach(function (el) {
  if (!navigator.clipboard) return;
  var b = document.createElement('button'); b.type = 'button'; b.className = 'quiet'; b.textContent = 'Copy';
  if (el.getAttribute('data-copy')) b.setAttribute('aria-label', el.getAttribute('data-copy'));
  b.addEventListener('click', function () {
    navigator.clipboard.writeText(el.tagName === 'INPUT' ? el.value : el.textContent.trim()).then(function () {
      b.textContent = 'Copied';
      if (said) said.textContent = said.getAttribute('data-copied') || 'Copied';
      setTimeout(function () { b.textContent = 'Copy'; }, 2000);
    }, function () { if (el.select) el.select(); });
  });
  el.insertAdjacentElement('afterend', b);
});
document.querySelectorAll('form[data-confirm]').forEach(function (form) {
  form.addEventListener('submit', function (event) {
    if (form.querySelector('input[name=confirmed]')) return;
    event.preventDefault();
    var d = document.createElement('dialog');
    var p = document.createElement('p'); p.textContent = form.getAttribute('data-confirm');
    var yes = document.createElement('button'); yes.type = 'button'; yes.className = 'danger'; yes.textContent = 'Confirm';
    var no = document.createElement('button'); no.type = 'button'; no.className = 'quiet'; no.textContent = 'Cancel';
    var row = document.createElement('div'); row.className = 'actions'; row.append(yes, no);
    d.append(p, row); d.setAttribute('aria-label', 'Confirm'); document.body.append(d);
    no.addEventListener('click', function () { d.close(); d.remove(); });
    yes.addEventListener('click', function () {
      var i = document.createElement('input'); i.type = 'hidden'; i.name = 'confirmed'; i.value = 'yes'; form.append(i); d.close(); form.submit();
    });
    d.showModal();
  });
});
`.trim()

/** The script's answer: a file of this origin, cached a few minutes. */
export const scriptResponse = (method: string): Response =>
  new Response(method === 'HEAD' ? null : SCRIPT, {
    headers: {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=300',
      'x-content-type-options': 'nosniff',
    },
  })
