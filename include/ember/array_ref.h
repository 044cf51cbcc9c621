// IntArrayRef: a non-owning view of int64 values (sizes, strides, dims), and
// DimVector: a small vector that keeps up to 6 dims inline (no heap
// allocation for the shapes of almost every tensor).
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iosfwd>
#include <vector>

namespace ember {

class IntArrayRef {
 public:
  constexpr IntArrayRef() = default;
  constexpr IntArrayRef(const int64_t* data, size_t size) : data_(data), size_(size) {}
  // The list must outlive the ref: fine for function arguments like t.view({2, 3}).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  constexpr IntArrayRef(std::initializer_list<int64_t> list) : data_(list.begin()), size_(list.size()) {}  // NOLINT
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  IntArrayRef(const std::vector<int64_t>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  constexpr IntArrayRef(const int64_t& single) : data_(&single), size_(1) {}       // NOLINT

  constexpr const int64_t* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const int64_t* begin() const { return data_; }
  constexpr const int64_t* end() const { return data_ + size_; }
  constexpr int64_t operator[](size_t i) const { return data_[i]; }
  int64_t back() const { return data_[size_ - 1]; }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  IntArrayRef slice(size_t start, size_t n) const { return IntArrayRef(data_ + start, n); }
  IntArrayRef slice(size_t start) const { return IntArrayRef(data_ + start, size_ - start); }

  friend bool operator==(IntArrayRef a, IntArrayRef b) {
    if (a.size_ != b.size_) return false;
    for (size_t i = 0; i < a.size_; ++i) {
      if (a.data_[i] != b.data_[i]) return false;
    }
    return true;
  }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

std::ostream& operator<<(std::ostream& os, IntArrayRef r);

class DimVector {
 public:
  static constexpr size_t kInline = 6;

  DimVector() = default;
  explicit DimVector(size_t n, int64_t value = 0) { assign(n, value); }
  DimVector(IntArrayRef r) { assign(r.begin(), r.end()); }  // NOLINT
  DimVector(std::initializer_list<int64_t> l) { assign(l.begin(), l.end()); }
  DimVector(const DimVector& o) { assign(o.begin(), o.end()); }
  DimVector(DimVector&& o) noexcept { move_from(o); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  DimVector& operator=(DimVector&& o) noexcept {
    if (this != &o) {
      free_heap();
      move_from(o);
    }
    return *this;
  }
  ~DimVector() { free_heap(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return ptr_; }
  const int64_t* data() const { return ptr_; }
  int64_t* begin() { return ptr_; }
  int64_t* end() { return ptr_ + size_; }
  const int64_t* begin() const { return ptr_; }
  const int64_t* end() const { return ptr_ + size_; }
  int64_t& operator[](size_t i) { return ptr_[i]; }
  int64_t operator[](size_t i) const { return ptr_[i]; }
  int64_t& back() { return ptr_[size_ - 1]; }
  operator IntArrayRef() const { return IntArrayRef(ptr_, size_); }  // NOLINT
  IntArrayRef ref() const { return IntArrayRef(ptr_, size_); }

  void push_back(int64_t v) {
    reserve(size_ + 1);
    ptr_[size_++] = v;
  }
  void pop_back() { --size_; }
  void insert(size_t pos, int64_t v) {
    reserve(size_ + 1);
    std::memmove(ptr_ + pos + 1, ptr_ + pos, (size_ - pos) * sizeof(int64_t));
    ptr_[pos] = v;
    ++size_;
  }
  void erase(size_t pos) {
    std::memmove(ptr_ + pos, ptr_ + pos + 1, (size_ - pos - 1) * sizeof(int64_t));
    --size_;
  }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) ptr_[i] = value;
    size_ = n;
  }
  void clear() { size_ = 0; }
  void assign(size_t n, int64_t value) {
    size_ = 0;
    resize(n, value);
  }
  void assign(const int64_t* b, const int64_t* e) {
    const size_t n = static_cast<size_t>(e - b);
    size_ = 0;
    reserve(n);
    if (n) std::memmove(ptr_, b, n * sizeof(int64_t));
    size_ = n;
  }
  void reserve(size_t n) {
    if (n <= capacity_) return;
    const size_t cap = n > capacity_ * 2 ? n : capacity_ * 2;
    auto* p = new int64_t[cap];
    if (size_) std::memcpy(p, ptr_, size_ * sizeof(int64_t));
    free_heap();
    ptr_ = p;
    capacity_ = cap;
  }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }

  friend bool operator==(const DimVector& a, const DimVector& b) { return a.ref() == b.ref(); }

 private:
  void free_heap() {
    if (ptr_ != inline_) delete[] ptr_;
    ptr_ = inline_;
    capacity_ = kInline;
  }
  void move_from(DimVector& o) {
    if (o.ptr_ == o.inline_) {
      ptr_ = inline_;
      capacity_ = kInline;
      std::memcpy(inline_, o.inline_, o.size_ * sizeof(int64_t));
    } else {
      ptr_ = o.ptr_;
      capacity_ = o.capacity_;
      o.ptr_ = o.inline_;
      o.capacity_ = kInline;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  int64_t* ptr_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = kInline;
  int64_t inline_[kInline];
};

}  // namespace ember
