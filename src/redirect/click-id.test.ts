import { describe, expect, test } from 'bun:test'
import { appendClickId } from './click-id'

describe('appendClickId', () => {
  test('adds sl_id as the last query parameter, before a fragment', () => {
    expect(appendClickId('https://shop.example/landing', 'abc')).toBe('https://shop.example/landing?sl_id=abc')
    expect(appendClickId('https://shop.example/?utm_source=x', 'abc')).toBe('https://shop.example/?utm_source=x&sl_id=abc')
    expect(appendClickId('https://shop.example/p?a=1#top', 'abc')).toBe('https://shop.example/p?a=1&sl_id=abc#top')
    expect(appendClickId('https://shop.example/p?', 'abc')).toBe('https://shop.example/p?sl_id=abc')
  })

  test('replaces an sl_id already in the destination, keeping the other parameters', () => {
    expect(appendClickId('https://shop.example/?sl_id=old&a=1', 'new')).toBe('https://shop.example/?a=1&sl_id=new')
    expect(appendClickId('https://shop.example/?a=1&sl_id=old#f', 'new')).toBe('https://shop.example/?a=1&sl_id=new#f')
    expect(appendClickId('https://shop.example/?sl_id', 'new')).toBe('https://shop.example/?sl_id=new')
    // Another parameter whose name merely starts with sl_id stays.
    expect(appendClickId('https://shop.example/?sl_idx=1', 'new')).toBe('https://shop.example/?sl_idx=1&sl_id=new')
  })

  test('the result parses with one sl_id', () => {
    const u = new URL(appendClickId('https://shop.example/a?sl_id=1&sl_id=2&b=%20', 'z'))
    expect(u.searchParams.getAll('sl_id')).toEqual(['z'])
    expect(u.searchParams.get('b')).toBe(' ')
  })
})
