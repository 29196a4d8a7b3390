// damage-control's floor for bash, by intent: each destructive form is refused however it is spelled (option
// order, wrappers, nesting), with a one-line reason naming its intent, and ordinary agent work still passes.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decideToolCall, loadRules, type Rules } from '../extensions/damage-control.js';
import { bashFindings } from '../lib/bash-guard.js';
import { makeGuard } from '../lib/path-guard.js';
import { parseShell } from '../lib/shell-words.js';
import { FACTORY_ROOT } from './helpers/node-rig.js';

// A project and a home that do not exist: the guard only reads the file system to follow links.
const PROJECT = '/nonexistent-factory/work/project';
const HOME = '/nonexistent-factory/home/u';
const OPTIONS = { env: {}, home: HOME, scratch: ['/tmp'] };

function shippedRules(): Rules {
  const loaded = loadRules(path.join(FACTORY_ROOT, '.pi', 'damage-control-rules.yaml'));
  if (!loaded.ok) throw new Error(loaded.error);
  return loaded.rules;
}

const rules = shippedRules();
const EMPTY_RULES: Rules = { bash: { deny: [], ask: [] }, paths: { protected: [] } };

/** The floor's verdict: the first refusal's intent, else the first question's, else "allow". */
function floor(command: string, protectedGlobs: string[] = rules.paths.protected): string {
  const findings = bashFindings(command, makeGuard(PROJECT, protectedGlobs, OPTIONS));
  const first = findings.find((f) => f.action === 'deny') ?? findings.find((f) => f.action === 'ask');
  return first ? `${first.action} ${first.intent}` : 'allow';
}

function decide(command: string) {
  return decideToolCall(rules, 'bash', { command }, PROJECT, OPTIONS);
}

describe('the floor refuses by intent', () => {
  it.each([
    // rm, in every option order and spelling, aimed at /, ~, $HOME, .. or outside the project
    ['rm -r -f /', 'delete-outside'],
    ['rm -fr ~', 'delete-outside'],
    ['rm --recursive --force $HOME', 'delete-outside'],
    ['rm --rec --force "${HOME}"', 'delete-outside'],
    ['rm / -rf', 'delete-outside'],
    ['rm -- -rf /', 'delete-outside'],
    ['command rm -rf ~/work', 'delete-outside'],
    ['\\rm -rf ~', 'delete-outside'],
    ['/bin/rm -rf /usr', 'delete-outside'],
    ['sudo rm -rf /var/lib', 'delete-outside'],
    ['sudo -u root nice -n 5 rm -r /etc', 'delete-outside'],
    ['ls | xargs -0 rm -rf ~/old', 'delete-outside'],
    ['timeout 10 rm -rf /opt', 'delete-outside'],
    ['env -S "rm -rf /opt"', 'delete-outside'],
    ['rm -rf ..', 'delete-outside'],
    ['rm -rf ../sibling', 'delete-outside'],
    ['rm -rf /opt/elsewhere', 'delete-outside'],
    ['rm -rf /{bin,etc}', 'delete-outside'],
    ['rm -rf /tmp', 'delete-outside'],
    ['cd / && rm -rf *', 'delete-outside'],
    ['unlink ~/.bashrc', 'delete-outside'],
    ['mv ~/.ssh /tmp/keys', 'delete-outside'],
    ['rm --no-preserve-root -rf /', 'rm-no-preserve-root'],
    // the whole project, or what it must keep
    ['rm -rf *', 'delete-project'],
    ['rm -rf ./*', 'delete-project'],
    ['rm -rf .', 'delete-project'],
    ['cd .. && rm -rf project', 'delete-project'],
    ['rm -rf .git', 'delete-protected'],
    ['rm -rf adws/adw_data', 'delete-protected'],
    ['rm -rf adws', 'delete-protected'],
    ['rm -rf .[!.]*', 'delete-protected'],
    ['rm -f .env', 'delete-protected'],
    ['mv .git /tmp/g', 'delete-protected'],
    // nested command lines are judged too
    ['bash -c "rm -rf ~/x"', 'delete-outside'],
    ["sh -c 'cd ~ && rm -rf *'", 'delete-outside'],
    ['eval "rm -rf /srv"', 'delete-outside'],
    ['echo $(rm -rf ~/x)', 'delete-outside'],
    ['echo `rm -rf /srv`', 'delete-outside'],
    ['bash <<EOF\nrm -rf ~/x\nEOF', 'delete-outside'],
    // find -delete / -exec rm
    ['find / -delete', 'delete-outside'],
    ['find ~ -name "*.log" -delete', 'delete-outside'],
    ['find $HOME -type f -delete', 'delete-outside'],
    ['find .. -delete', 'delete-outside'],
    ['find /var/log -exec rm {} \\;', 'delete-outside'],
    ['find /opt -execdir rm -rf {} +', 'delete-outside'],
    ['find .git -delete', 'delete-protected'],
    // shred and truncate
    ['shred -u ~/.ssh/id_rsa', 'delete-outside'],
    ['shred .env', 'delete-protected'],
    ['truncate -s 0 ~/.bashrc', 'delete-outside'],
    ['truncate --size=0 /etc/hosts', 'delete-outside'],
    ['truncate -s0 .git/index', 'delete-protected'],
    // dd of= and redirections onto files outside the tree or into protected ones
    ['dd if=/dev/zero of=/dev/sda', 'write-outside'],
    ['dd if=/dev/zero of=~/disk.img', 'write-outside'],
    ['dd if=x of=/etc/passwd', 'write-outside'],
    ['dd if=x of=.git/index', 'write-protected'],
    ['echo x > /etc/passwd', 'write-outside'],
    ['echo x >> ~/.bashrc', 'write-outside'],
    ['echo x > ../outside.txt', 'write-outside'],
    ['cat key &> /opt/x', 'write-outside'],
    ['echo x 2> /var/log/x', 'write-outside'],
    ['echo x >| /etc/y', 'write-outside'],
    ['cat > ~/.ssh/authorized_keys <<EOF\nkey\nEOF', 'write-outside'],
    ['echo x > .git/hooks/pre-commit', 'write-protected'],
    ['printf x >> .git/config', 'write-protected'],
    ['cd .git/hooks && echo x > pre-commit', 'write-protected'],
    ['echo x > adws/adw_data/bon/a1/arm-1.patch', 'write-protected'],
    ['echo x > .pi/extensions/damage-control.ts', 'write-protected'],
    ['echo KEY=1 > config/.env', 'write-protected'],
    // writing into .git (or outside) by any command the guard reads
    ['echo x | tee .git/hooks/pre-commit', 'write-protected'],
    ['echo x | tee -a ~/.profile', 'write-outside'],
    ['cp hook.sh .git/hooks/pre-commit', 'write-protected'],
    ['cp -t .git/hooks hook', 'write-protected'],
    ['cp ../elsewhere/.env .', 'write-protected'],
    ['mv hook .git/hooks/post-checkout', 'write-protected'],
    ['cp app.conf /etc/app.conf', 'write-outside'],
    ['ln -s ../../hook.sh .git/hooks/pre-push', 'write-protected'],
    ['install -m 755 hook .git/hooks/pre-commit', 'write-protected'],
    ['sed -i "s/a/b/" .git/config', 'write-protected'],
    ['curl -o ~/.local/bin/tool https://x.example/t', 'write-outside'],
    ['wget -O /usr/local/bin/t https://x.example/t', 'write-outside'],
    ['chmod -R 777 /', 'write-outside'],
    ['chown -R me ~', 'write-outside'],
    ['chmod +x .git/hooks/pre-commit', 'write-protected'],
    ['rsync -a --delete empty/ ~/', 'write-outside'],
    ['tar -xzf a.tgz -C ~/', 'write-outside'],
    ['tar czf ~/backup.tgz .', 'write-outside'],
    ['unzip a.zip -d /opt/x', 'write-outside'],
    ['touch ~/.hushlogin', 'write-outside'],
    ['mkdir -p .git/hooks/x', 'write-protected'],
    ['ln -s /etc secrets', 'link-outside'],
    ['ln ~/.bashrc here', 'link-outside'],
    // git: ignored files, planted commands, config outside the project
    ['git clean -fdx', 'git-clean-ignored'],
    ['git clean -xfd', 'git-clean-ignored'],
    ['git clean -f -X', 'git-clean-ignored'],
    ['git -C sub clean -dfx', 'git-clean-ignored'],
    ['git config core.hooksPath .githooks', 'git-config-exec'],
    ['git config --local core.fsmonitor ./watch.sh', 'git-config-exec'],
    ['git config core.sshCommand "ssh -i k"', 'git-config-exec'],
    ['git config filter.lfs.clean "sh x"', 'git-config-exec'],
    ['git config alias.co "!sh x"', 'git-config-exec'],
    ['git config set core.pager less', 'git-config-exec'],
    ['git -c core.hooksPath=/tmp/h commit -m x', 'git-config-exec'],
    ['git config --global user.email x@y', 'git-config-outside'],
    // disks
    ['mkfs.ext4 /dev/sdb1', 'disk-format'],
    ['wipefs -a /dev/sda', 'disk-format'],
    ['sudo mkswap /dev/sdb2', 'disk-format'],
  ])('%j → %s', (command, intent) => {
    expect(floor(command)).toBe(`deny ${intent}`);
    const decision = decide(command);
    expect(decision.action).toBe('deny');
    if (decision.action === 'deny') expect(decision.reason).not.toContain('\n');
  });

  it('names the intent in a one-line reason', () => {
    expect(decide('echo x > .git/hooks/pre-commit')).toEqual({
      action: 'deny',
      reason:
        'the redirection > writes to .git/hooks/pre-commit, a protected path (rule ".git/**") (intent write-protected)',
    });
    expect(decide('cd .. && echo x > y.txt')).toEqual({
      action: 'deny',
      reason:
        'the redirection > writes to y.txt (/nonexistent-factory/work/y.txt), outside the project (intent write-outside)',
    });
  });

  it('holds with a rules file that denies and protects nothing', () => {
    for (const command of [
      'echo x > .git/hooks/pre-commit',
      'rm -rf ~/x',
      'find / -delete',
      'git clean -fdx',
      'cp x adws/adw_data/bon/a/p.patch',
    ]) {
      expect(decideToolCall(EMPTY_RULES, 'bash', { command }, PROJECT, OPTIONS).action, command).toBe('deny');
    }
  });
});

describe('the floor asks inside the project', () => {
  it.each([
    ['rm -rf dist', 'delete-recursive'],
    ['rm --force --recursive build', 'delete-recursive'],
    ['find . | xargs rm -rf', 'delete-recursive'],
    ['rm -rf "$OUT"', 'delete-recursive'],
    ['rm -rf /tmp/scratch-dir', 'delete-recursive'],
    ['find . -name "*.pyc" -delete', 'find-delete'],
    ['find build -type f -exec rm {} +', 'find-delete'],
    ['shred notes.txt', 'shred'],
    ['truncate -s 0 log.txt', 'truncate'],
    ['rsync -a --delete src/ build/', 'delete-recursive'],
  ])('%j → ask %s', (command, intent) => {
    expect(floor(command)).toBe(`ask ${intent}`);
    expect(decide(command).action).toBe('ask');
  });
});

describe('ordinary agent work passes', () => {
  it.each([
    'git status',
    'git diff HEAD~1',
    'git add -A',
    'git commit -m "fix: keep > and >> quoted"',
    'git log --oneline | head -5',
    'npm test',
    'npx vitest run test/unit',
    'npm test 2>/dev/null',
    'npm test > /dev/null 2>&1',
    'npm test &> /dev/null',
    'echo oops >&2',
    'echo x 1>&2',
    'rm file.txt',
    'rm -f build/a.o src/old.ts',
    'echo x > out.txt',
    'echo x >> notes/log.md',
    'cat <<EOF > notes.md\nhello > world\nEOF',
    'echo x > /tmp/scratch.log',
    'sort data.txt > /tmp/sorted.txt',
    'mktemp',
    'cp a.txt b.txt',
    'mkdir -p build && cp src/a.js build/',
    'mv src/a.ts src/b.ts',
    'ln -s src/index.ts index.ts',
    'find . -name "*.ts" -type f',
    'chmod +x scripts/run.sh',
    'git clean -fd',
    'git clean -nx',
    'dd if=/dev/zero of=/dev/null count=1',
    'dd if=a.img of=b.img',
    'curl -o vendor/x.js https://x.example/x.js',
    'curl -s https://x.example -o -',
    'sed -i "s/a/b/" src/a.ts',
    'rsync -a src/ build/',
    'tar -czf /tmp/src.tgz src',
    'tar -xf vendor.tar',
    'touch src/a.ts',
    'mkdir -p build/out',
    'npm test | tee test.log',
    'git config user.name bot',
    'git config --get core.hooksPath',
    'git config --unset core.hooksPath',
    'ls -la /',
    'cat /etc/hosts',
    'cd src && ls',
    'echo "$HOME"',
    'test -f .env && echo yes',
    'command -v rm',
  ])('%j', (command) => {
    expect(decide(command)).toEqual({ action: 'allow' });
  });

  it('reads `rm -- -rf` as a file named -rf inside the project (the rules file still asks, by its spelling)', () => {
    expect(floor('rm -- -rf')).toBe('allow');
    expect(decide('rm -- -rf').action).toBe('ask');
  });
});

describe('the shell reader', () => {
  it('splits commands, removes quotes and finds redirections with their descriptors', () => {
    const commands = parseShell('a "b c" \'d\'>out 2>&1 && e\\ f | g; h >> "x y"', '/h');
    expect(commands.map((c) => c.words.map((w) => w.text))).toEqual([['a', 'b c', 'd'], ['e f'], ['g'], ['h']]);
    expect(commands[0].redirects.map((r) => [r.op, r.target.text])).toEqual([
      ['>', 'out'],
      ['>&', '1'],
    ]);
    expect(commands.map((c) => c.after)).toEqual(['', '&&', '|', ';']);
    expect(commands[3].redirects[0].target.text).toBe('x y');
  });

  it('expands ~ and $HOME, marks variables and globs unknown, and keeps the known prefix', () => {
    const [command] = parseShell('x ~ ~/a "$HOME/b" ${HOME} of=~/c $X/y src/*.ts \'~\' "$HOME"', '/h');
    const words = command.words.slice(1);
    expect(words.map((w) => w.text)).toEqual(['/h', '/h/a', '/h/b', '/h', 'of=/h/c', '$X/y', 'src/*.ts', '~', '/h']);
    expect(words[5]).toMatchObject({ known: false, prefix: '', glob: false });
    expect(words[6]).toMatchObject({ known: false, prefix: 'src/', glob: true });
  });

  it('skips here-document bodies and collects nested command lines', () => {
    const commands = parseShell('cat <<EOF > f\nrm -rf /\nEOF\necho $(date) `id` <(ls)', '/h');
    expect(commands.map((c) => c.words[0]?.text)).toEqual(['cat', 'echo']);
    expect(commands[0].heredocs).toEqual(['rm -rf /']);
    expect(commands[1].nested).toEqual(['date', 'id', 'ls']);
  });

  it('ignores comments and treats a quoted operator as a word', () => {
    const commands = parseShell('echo ">" \'|\' # rm -rf /\nls', '/h');
    expect(commands.map((c) => c.words.map((w) => w.text))).toEqual([['echo', '>', '|'], ['ls']]);
    expect(commands[0].redirects).toEqual([]);
  });
});
