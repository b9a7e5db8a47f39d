import { jsonBody, request } from './http';

export interface TestUser {
  id: string;
  username: string;
  role: 'admin' | 'user';
  token: string;
}

/** Registers a user through the real API (the first one on a hub becomes admin) and returns its access token. */
export async function registerUser(api: string, username: string): Promise<TestUser> {
  const response = await request(`${api}/auth/register`, jsonBody({ username, email: `${username}@example.com`, password: `pw-${username}-long-enough` }));
  if (response.status !== 201) throw new Error(`registering ${username}: ${response.status} ${JSON.stringify(response.body)}`);
  const { access_token: token, user } = response.body.data;
  return { id: user.id, username, role: user.role, token };
}
