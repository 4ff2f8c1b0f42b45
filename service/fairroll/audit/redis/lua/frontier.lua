-- Helpers every tree script starts with: a tree's frontier hashes (KEYS[4]) for a
-- size (merkle.frontier_indices), in merkle.stored_index order, and a head's seq.
local function stored_index(level, n)
  for _ = 1, level do n = 2 * n + 1 end
  local i = 0
  while n > 0 do i = i + n; n = math.floor(n / 2) end
  return i + level
end
local function frontier(size, out)
  local p, level, start = 1, 0, 0
  while p * 2 <= size do p = p * 2; level = level + 1 end
  while level >= 0 do
    if start + p <= size then
      local at = stored_index(level, start / p) * 32
      out[#out + 1] = redis.call('GETRANGE', KEYS[4], at, at + 31)
      start = start + p
    end
    p = p / 2
    level = level - 1
  end
  return out
end
local function seq_of(head)
  return tonumber(string.match(head, '^(%d+):') or '0')
end
