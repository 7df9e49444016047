/** Goal templates: a parent goal and the sub-goals that usually make it up. Applying one creates the tree. */

export interface GoalTemplate {
  id: string;
  name: string;
  description: string;
  goals: Array<{ title: string; description: string }>;
}

export const TEMPLATES: readonly GoalTemplate[] = [
  {
    id: 'product_launch',
    name: 'Product launch',
    description: 'Take a product from finished build to public availability',
    goals: [
      { title: 'Confirm launch scope', description: 'Freeze the feature list and name what is left for later' },
      { title: 'Prepare release notes and documentation', description: 'Write what changed, how to start, and the known limits' },
      { title: 'Plan the announcement', description: 'Choose the date, the channels and who says what' },
      { title: 'Run the release checklist', description: 'Builds signed, rollback rehearsed, monitoring in place' },
      { title: 'Review the first week', description: 'Collect feedback, incidents and numbers; decide the follow-ups' },
    ],
  },
  {
    id: 'incident_response',
    name: 'Incident response',
    description: 'Handle a production incident from first alert to lessons learned',
    goals: [
      { title: 'Triage and assign an incident lead', description: 'Establish severity, impact and who coordinates' },
      { title: 'Contain the impact', description: 'Stop the damage first: roll back, fail over or disable the feature' },
      { title: 'Find and fix the cause', description: 'Work out why it happened and ship the fix' },
      { title: 'Keep stakeholders informed', description: 'Regular status updates until the incident is closed' },
      { title: 'Write the post-incident review', description: 'Timeline, causes, what went well, and follow-up actions with owners' },
    ],
  },
  {
    id: 'team_onboarding',
    name: 'Onboarding',
    description: 'Bring a new team member (or agent) to full productivity',
    goals: [
      { title: 'Set up access and tools', description: 'Accounts, permissions, development environment' },
      { title: 'Walk through the architecture', description: 'The main systems, how they connect, where the docs are' },
      { title: 'Ship a first small change', description: 'A real change end to end, with review and release' },
      { title: 'Agree on goals for the first quarter', description: 'What success looks like and how it will be checked' },
    ],
  },
  {
    id: 'security_audit',
    name: 'Security audit',
    description: 'Review a system for security weaknesses and fix what matters',
    goals: [
      { title: 'Inventory assets and entry points', description: 'Services, data stores, credentials and exposed interfaces' },
      { title: 'Review access control', description: 'Who can do what; remove unused and over-broad permissions' },
      { title: 'Scan dependencies and configuration', description: 'Known vulnerabilities, secrets in code, unsafe defaults' },
      { title: 'Fix the findings by risk', description: 'Highest impact first, each fix verified' },
      { title: 'Report and schedule the next audit', description: 'What was found, what was fixed, what remains accepted' },
    ],
  },
  {
    id: 'data_pipeline',
    name: 'Data pipeline',
    description: 'Build a dependable pipeline from sources to a usable dataset',
    goals: [
      { title: 'Define sources and the target schema', description: 'Where data comes from and what shape it must end in' },
      { title: 'Build ingestion and transformation', description: 'Repeatable, idempotent steps with clear inputs and outputs' },
      { title: 'Add validation and monitoring', description: 'Checks on volume, freshness and quality, with alerts' },
      { title: 'Document and hand over', description: 'How to run it, fix it and extend it' },
    ],
  },
  {
    id: 'agent_deployment',
    name: 'Agent deployment',
    description: 'Put a new agent into service safely',
    goals: [
      { title: 'Write the manifest and system prompt', description: 'Model, tools, capabilities and the instructions it follows' },
      { title: 'Test it on representative tasks', description: 'Known cases with expected outcomes, including refusals' },
      { title: 'Set budgets and limits', description: 'Token quotas, tool allowlists, schedules and triggers' },
      { title: 'Roll out and watch', description: 'Start small, read its deliveries and usage, then widen' },
      { title: 'Review after a week', description: 'Adjust prompt, tools and limits from what happened' },
    ],
  },
];
