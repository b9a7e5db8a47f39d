import { lazy, Suspense, useEffect, useState } from 'react';
import { Navigate, NavLink, Outlet, Route, Routes, useLocation } from 'react-router';
import { useAuth } from './auth/auth-context';
import { Icon, type IconName } from './components/icons';
import { Loading } from './components/ui';
import { useTheme } from './lib/theme';
import { ChatPage } from './pages/chat-page';
import { NotFoundPage } from './pages/not-found-page';
import { SessionsPage } from './pages/sessions-page';
import { SignInPage } from './pages/sign-in-page';
import { WorkflowsPage } from './pages/workflows-page';

// Pages most visits never open load on demand (the YAML editor brings the yaml library).
const WorkflowEditorPage = lazy(() => import('./pages/workflow-editor-page').then((module) => ({ default: module.WorkflowEditorPage })));
const AdminPage = lazy(() => import('./pages/admin-page').then((module) => ({ default: module.AdminPage })));
const KnowledgePage = lazy(() => import('./pages/knowledge-page').then((module) => ({ default: module.KnowledgePage })));
const ApprovalsPage = lazy(() => import('./pages/approvals-page').then((module) => ({ default: module.ApprovalsPage })));
const EventsPage = lazy(() => import('./pages/events-page').then((module) => ({ default: module.EventsPage })));
const ApiKeysPage = lazy(() => import('./pages/api-keys-page').then((module) => ({ default: module.ApiKeysPage })));

export function App() {
  return (
    <Routes>
      <Route path="/sign-in" element={<SignInGate />} />
      <Route element={<SignedInLayout />}>
        <Route index element={<Navigate to="/sessions" replace />} />
        <Route path="/sessions" element={<SessionsPage />} />
        <Route path="/sessions/:id" element={<ChatPage />} />
        <Route path="/workflows" element={<WorkflowsPage />} />
        <Route path="/workflows/new" element={<WorkflowEditorPage />} />
        <Route path="/workflows/:name" element={<WorkflowEditorPage />} />
        <Route path="/knowledge" element={<KnowledgePage />} />
        <Route path="/approvals" element={<ApprovalsPage />} />
        <Route path="/events" element={<EventsPage />} />
        <Route path="/api-keys" element={<ApiKeysPage />} />
        <Route path="/admin" element={<Navigate to="/admin/users" replace />} />
        <Route path="/admin/:tab" element={<AdminPage />} />
        <Route path="*" element={<NotFoundPage />} />
      </Route>
    </Routes>
  );
}

function SignInGate() {
  const { user, checking } = useAuth();
  if (checking && user) return <Loading label="Signing in…" />;
  return user ? <Navigate to="/sessions" replace /> : <SignInPage />;
}

// `admin`: shown to administrators only (its endpoints are theirs).
const NAV: { to: string; label: string; icon: IconName; admin?: boolean }[] = [
  { to: '/sessions', label: 'Chat', icon: 'chat' },
  { to: '/workflows', label: 'Workflows', icon: 'workflows' },
  { to: '/events', label: 'Events', icon: 'events', admin: true },
  { to: '/knowledge', label: 'Knowledge', icon: 'knowledge' },
  { to: '/approvals', label: 'Approvals', icon: 'admin' },
  { to: '/api-keys', label: 'API keys', icon: 'key' },
];

function SignedInLayout() {
  const { user, signOut } = useAuth();
  const location = useLocation();
  const [theme, toggleTheme] = useTheme();
  // On a narrow screen the navigation and the account actions sit behind a menu button.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [location.pathname]);
  if (!user) return <Navigate to="/sign-in" replace state={{ from: location.pathname }} />;
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <aside className="sidebar">
        <div className="sidebar-top">
          <div className="brand">
            <img src="/favicon.svg" alt="" width={26} height={26} />
            <span>Switchboard</span>
          </div>
          <button
            type="button"
            className="btn small ghost menu-button"
            aria-expanded={menuOpen}
            aria-controls="sidebar-panel"
            aria-label={menuOpen ? 'Close menu' : 'Open menu'}
            onClick={() => setMenuOpen((open) => !open)}
          >
            <Icon name={menuOpen ? 'close' : 'menu'} size={20} />
          </button>
        </div>
        <div id="sidebar-panel" className={`sidebar-panel${menuOpen ? ' open' : ''}`}>
          <nav aria-label="Main">
            {NAV.filter((item) => !item.admin || user.role === 'admin').map((item) => (
              <NavLink key={item.to} to={item.to} className="nav-link">
                <Icon name={item.icon} />
                {item.label}
              </NavLink>
            ))}
            {user.role === 'admin' && (
              <NavLink to="/admin" className={({ isActive }) => `nav-link ${isActive || location.pathname.startsWith('/admin') ? 'active' : ''}`}>
                <Icon name="admin" />
                Admin
              </NavLink>
            )}
          </nav>
          <div className="sidebar-footer">
            <div className="who">
              <span className="avatar" aria-hidden="true">
                {user.username.slice(0, 1).toUpperCase()}
              </span>
              <div>
                <div className="who-name">{user.username}</div>
                <div className="muted small">{user.role === 'admin' ? 'Administrator' : 'Member'}</div>
              </div>
            </div>
            <div className="footer-actions">
              <button
                type="button"
                className="btn small ghost"
                onClick={toggleTheme}
                aria-label={theme === 'dark' ? 'Switch to light theme' : 'Switch to dark theme'}
              >
                <Icon name={theme === 'dark' ? 'sun' : 'moon'} size={16} />
                {theme === 'dark' ? 'Light' : 'Dark'}
              </button>
              <button type="button" className="btn small ghost" onClick={() => void signOut()}>
                <Icon name="signOut" size={16} />
                Sign out
              </button>
            </div>
          </div>
        </div>
      </aside>
      <main id="main" className="content" tabIndex={-1}>
        <Suspense fallback={<Loading />}>
          <Outlet />
        </Suspense>
      </main>
    </div>
  );
}
