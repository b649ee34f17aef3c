// The Supabase account's other ways in, beside email and password: "Forgot
// your password?" (POST {auth}/recover emails a link), "Create an account"
// (POST {auth}/signup), and the way back from those emails' links, which
// bring a session in the address's fragment: a recovery link asks for a new
// password (PUT {auth}/user), a confirmation link signs in.

import {
  redirectResult, supabaseRecover, supabaseSetPassword, supabaseSignUp,
} from './session.js';

const $ = (id) => document.getElementById(id);

// createSupabaseAccount wires the forms. config() is the server's settings;
// showSignin(message) shows the sign-in card; showError(anchor, message)
// shows an error under the form anchor belongs to; signIn(button, obtain)
// signs in with the session obtain() answers.
export function createSupabaseAccount({ config, showSignin, showError, signIn }) {
  const el = {
    signinForm: $('signin-supabase'),
    email: $('signin-email'),
    password: $('signin-password'),
    forgot: $('forgot-password'),
    showSignup: $('show-signup'),
    signupForm: $('signup-form'),
    signupEmail: $('signup-email'),
    signupPassword: $('signup-password'),
    signupCancel: $('signup-cancel'),
    newPasswordForm: $('new-password-form'),
    newPasswordFor: $('new-password-for'),
    newPassword: $('new-password'),
    note: $('signin-note'),
  };
  // The session a recovery link brought, until its new password is saved.
  let recovering = null;

  function configured() {
    const c = config();
    return Boolean(c.supabase_url && c.supabase_anon_key);
  }

  // say shows a confirmation under the form anchor belongs to; '' hides it.
  function say(anchor, text) {
    const option = anchor?.closest('.signin-option');
    if (option) option.append(el.note);
    el.note.textContent = text;
    el.note.hidden = !text;
  }

  function showForm(form) {
    for (const f of [el.signinForm, el.signupForm, el.newPasswordForm]) f.hidden = f !== form || !configured();
  }

  // render shows the sign-in form, as the page starts or after sign-out.
  function render() {
    showForm(el.signinForm);
  }

  // reset forgets what was typed: signed in, or signed out.
  function reset() {
    recovering = null;
    el.signupPassword.value = '';
    el.newPassword.value = '';
    say(null, '');
    render();
  }

  async function forgot() {
    const email = el.email.value.trim();
    say(null, '');
    if (!email || !el.email.checkValidity()) {
      showError(el.forgot, 'Write your email address above first, then choose “Forgot your password?”.');
      el.email.focus();
      return;
    }
    showError(null, '');
    el.forgot.disabled = true;
    try {
      await supabaseRecover(config(), email);
      say(el.forgot, `If ${email} has an account, an email is on its way with a link to choose a new password.`);
    } catch (err) {
      showError(el.forgot, `The email could not be sent: ${err.message}`);
    } finally {
      el.forgot.disabled = false;
    }
  }

  function openSignup() {
    showError(null, '');
    say(null, '');
    el.password.value = '';
    el.signupEmail.value = el.email.value.trim();
    showForm(el.signupForm);
    (el.signupEmail.value ? el.signupPassword : el.signupEmail).focus();
  }

  function closeSignup() {
    showError(null, '');
    showForm(el.signinForm);
    el.email.focus();
  }

  async function signup(event) {
    event.preventDefault();
    const button = el.signupForm.querySelector('button[type="submit"]');
    const email = el.signupEmail.value.trim();
    showError(null, '');
    button.disabled = true;
    try {
      const session = await supabaseSignUp(config(), email, el.signupPassword.value);
      el.signupPassword.value = '';
      if (session) {
        // The project confirms no address: the account is ready.
        await signIn(button, async () => session);
        return;
      }
      el.email.value = email;
      showForm(el.signinForm);
      say(el.email, `Almost done: we sent an email to ${email}. Open its link to confirm your address and come back signed in.`);
    } catch (err) {
      showError(button, `The account could not be created: ${err.message}`);
    } finally {
      button.disabled = false;
    }
  }

  async function saveNewPassword(event) {
    event.preventDefault();
    const button = el.newPasswordForm.querySelector('button[type="submit"]');
    if (!recovering) return;
    showError(null, '');
    button.disabled = true;
    try {
      await supabaseSetPassword(config(), recovering, el.newPassword.value);
      const session = recovering;
      el.newPassword.value = '';
      await signIn(button, async () => session);
    } catch (err) {
      showError(button, `The new password was not saved: ${err.message}`);
    } finally {
      button.disabled = false;
    }
  }

  // takeRedirect handles the way back from a Supabase email and answers
  // whether it did. The session leaves the address bar at once.
  async function takeRedirect() {
    const result = redirectResult(window.location.hash);
    if (!result || !configured()) return false;
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
    if (result.error) {
      showSignin(`That link did not work: ${result.error}. Ask for a new one below.`);
      return true;
    }
    if (result.type === 'recovery') {
      recovering = result.session;
      showSignin('');
      el.newPasswordFor.textContent = result.session.email ? `For ${result.session.email}.` : '';
      // Tells a password manager whose password this is.
      $('new-password-user').value = result.session.email;
      showForm(el.newPasswordForm);
      el.newPassword.focus();
      return true;
    }
    // A confirmed address, a magic link or an invitation: signed in.
    showSignin('');
    await signIn(null, async () => result.session);
    return true;
  }

  el.forgot.addEventListener('click', forgot);
  el.showSignup.addEventListener('click', openSignup);
  el.signupCancel.addEventListener('click', closeSignup);
  el.signupForm.addEventListener('submit', signup);
  el.newPasswordForm.addEventListener('submit', saveNewPassword);

  return { render, reset, takeRedirect };
}
